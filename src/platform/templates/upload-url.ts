import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The SDK uploads COPY archives with a plain PUT to the URL the platform hands out, without the API key. The URL is
 * therefore its own credential: an HMAC over template, files hash and expiry, with a secret only the platform holds.
 */
export interface UploadSignature {
  templateID: string;
  hash: string;
  /** Unix time in seconds after which the URL is refused. */
  expires: number;
}

export function signUpload(secret: Buffer, s: UploadSignature): string {
  return createHmac('sha256', secret).update(`${s.templateID}\n${s.hash}\n${s.expires}`).digest('base64url');
}

export type UploadCheck = { ok: true } | { ok: false; reason: string };

export function checkUpload(secret: Buffer, s: UploadSignature, signature: string | null, nowSeconds: number): UploadCheck {
  if (!signature) return { ok: false, reason: 'the upload URL has no signature (sig); ask GET /templates/{id}/files/{hash} for a new one' };
  if (!Number.isInteger(s.expires) || s.expires < nowSeconds)
    return { ok: false, reason: 'the upload URL expired; ask GET /templates/{id}/files/{hash} for a new one' };
  const expected = Buffer.from(signUpload(secret, s));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given))
    return { ok: false, reason: 'the upload URL signature does not match' };
  return { ok: true };
}
