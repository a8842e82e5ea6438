/**
 * Signed `/files` URLs: a client holding the access token can hand out a URL that reads or writes one path (as one
 * user, optionally until an expiry) without the token itself. The signature is `v1_` + the unpadded standard base64
 * of sha256("<path>:<read|write>:<username or empty>:<access token>[:<expiry unix seconds>]"), the form E2B clients
 * compute.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

export type FileOperation = 'read' | 'write';

export function fileSignature(path: string, operation: FileOperation, username: string, token: string, expiration?: number): string {
  const raw = `${path}:${operation}:${username}:${token}${expiration === undefined ? '' : `:${expiration}`}`;
  return `v1_${createHash('sha256').update(raw, 'utf8').digest('base64').replace(/=+$/, '')}`;
}

/** undefined when the signature is valid now; otherwise why not. */
export function signatureProblem(
  given: string,
  expirationText: string | null,
  path: string,
  operation: FileOperation,
  username: string,
  token: string | undefined,
  nowSeconds: number,
): string | undefined {
  if (token === undefined) return 'this sandbox has no access token, so no signed URL exists for it';
  let expiration: number | undefined;
  if (expirationText !== null) {
    if (!/^[0-9]{1,12}$/.test(expirationText))
      return `signature_expiration ${JSON.stringify(expirationText)} is not a unix time in seconds`;
    expiration = Number(expirationText);
    if (expiration < nowSeconds) return 'the signed URL has expired';
  }
  const want = Buffer.from(fileSignature(path, operation, username, token, expiration));
  const got = Buffer.from(given);
  if (want.length !== got.length || !timingSafeEqual(want, got))
    return `the signature does not match this path, operation (${operation}) and user`;
  return undefined;
}
