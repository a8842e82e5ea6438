import type { ResumeSandbox } from './resume';

/**
 * Resumes through the platform API (`POST {base}/sandboxes/{sandboxID}/resume`, `X-API-Key`), for a
 * gateway that runs apart from the platform. The platform updates the catalog; the gateway re-reads it.
 */
export function platformResumer(baseUrl: string, apiKey: string | undefined): ResumeSandbox {
  const base = baseUrl.replace(/\/+$/, '');
  return async (sandboxID) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (apiKey !== undefined) headers['x-api-key'] = apiKey;
    const res = await fetch(`${base}/sandboxes/${encodeURIComponent(sandboxID)}/resume`, { method: 'POST', headers, body: '{}' });
    if (!res.ok) {
      const text = (await res.text().catch(() => '')).slice(0, 200);
      throw new Error(`the platform answered ${res.status} to resume${text ? `: ${text}` : ''}`);
    }
    await res.body?.cancel().catch(() => {});
  };
}
