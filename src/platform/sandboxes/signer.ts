/** Pure: which sandbox's access token made a signed /files URL's signature (see signed-url-owner.ts). */
import { timingSafeEqual } from 'node:crypto';
import { fileSignature, type SignedUrlQuery } from '../../contract/file-signature';

export type SignedUrlOwner = { sandboxID: string; expired: boolean } | undefined;

/** Pure: the sandbox whose token made `q.signature`, and whether the URL has expired by `nowSeconds`. */
export function findSigner(
  sandboxes: ReadonlyArray<{ sandboxID: string; envdAccessToken: string }>,
  q: SignedUrlQuery,
  nowSeconds: number,
): SignedUrlOwner {
  const given = Buffer.from(q.signature);
  for (const s of sandboxes) {
    const want = Buffer.from(fileSignature(q.path, q.operation, q.username, s.envdAccessToken, q.expiration));
    if (want.length === given.length && timingSafeEqual(want, given))
      return { sandboxID: s.sandboxID, expired: q.expiration !== undefined && q.expiration < nowSeconds };
  }
  return undefined;
}
