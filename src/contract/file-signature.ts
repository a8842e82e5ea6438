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

/** What identifies a signed `/files` URL's signer, as the gateway asks the platform (`POST SIGNED_URL_OWNER_PATH`). */
export interface SignedUrlQuery {
  path: string;
  operation: FileOperation;
  username: string;
  signature: string;
  expiration?: number;
}

export const SIGNED_URL_OWNER_PATH = '/signed-urls/owner';

/** A `/files` request that carries a signature: the query that identifies its signer; undefined for any other. */
export function signedFilesQuery(method: string | undefined, url: string | undefined): SignedUrlQuery | undefined {
  if (url === undefined || (method !== 'GET' && method !== 'POST')) return undefined;
  // Without a literal `?` the query is empty, so there is no signature: most calls are answered without parsing.
  if (!url.includes('?')) return undefined;
  const parsed = new URL(url, 'http://gateway.invalid');
  if (parsed.pathname !== '/files') return undefined;
  const signature = parsed.searchParams.get('signature');
  if (!signature) return undefined;
  const expirationText = parsed.searchParams.get('signature_expiration');
  const expiration = expirationText !== null && /^[0-9]{1,12}$/.test(expirationText) ? Number(expirationText) : undefined;
  return {
    path: parsed.searchParams.get('path') ?? '',
    operation: method === 'GET' ? 'read' : 'write',
    username: parsed.searchParams.get('username') ?? '',
    signature,
    ...(expiration !== undefined ? { expiration } : {}),
  };
}
