/**
 * Signed `/files` URLs through the gateway. Such a URL carries no access token (that is its point): the sandbox's
 * agent checks its signature and expiry, so the gateway lets it through without X-Access-Token. When the URL names
 * no sandbox (the `<E2B_SANDBOX_URL>/files?...` form), the gateway asks the platform whose token signed it.
 */
import { SIGNED_URL_OWNER_PATH, type SignedUrlQuery } from '../contract/file-signature';

/** The sandbox that signed the URL (and whether it has expired), or undefined when no sandbox did. */
export type SignedUrlOwnerLookup = (q: SignedUrlQuery) => Promise<{ sandboxID: string; expired: boolean } | undefined>;

/** Asks the platform API (`POST {base}/signed-urls/owner`, `X-API-Key`), for a gateway apart from the platform. */
export function platformSignedUrlOwner(baseUrl: string, apiKey: string | undefined): SignedUrlOwnerLookup {
  const url = `${baseUrl.replace(/\/+$/, '')}${SIGNED_URL_OWNER_PATH}`;
  return async (q) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (apiKey !== undefined) headers['x-api-key'] = apiKey;
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(q), signal: AbortSignal.timeout(10_000) });
    if (res.status === 404) {
      await res.body?.cancel().catch(() => {});
      return undefined;
    }
    if (!res.ok) throw new Error(`the platform answered ${res.status} to ${SIGNED_URL_OWNER_PATH}: ${(await res.text()).slice(0, 200)}`);
    return (await res.json()) as { sandboxID: string; expired: boolean };
  };
}
