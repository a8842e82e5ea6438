import { request } from 'node:http';

/** One GET; resolves to the status code, or undefined when nothing answered. */
function probe(url: string, timeoutMs: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'GET', timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

/** Polls `url` until it answers `expected`, or fails after `deadlineMs` naming what it last saw. */
export async function waitForHttp(url: string, expected: number, deadlineMs = 15_000): Promise<void> {
  const until = Date.now() + deadlineMs;
  let last: number | undefined;
  while (Date.now() < until) {
    last = await probe(url, 1_000);
    if (last === expected) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer ${expected} within ${deadlineMs} ms (last: ${last ?? 'no answer'})`);
}
