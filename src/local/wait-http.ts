import { request } from 'node:http';
import { waitFor } from '../util/poll';

/** One GET; resolves to the status code, or undefined when nothing answered. */
export function probeHttp(url: string, timeoutMs: number): Promise<number | undefined> {
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
  let last: number | undefined;
  await waitFor(
    `${url} to answer ${expected}`,
    async () => {
      last = await probeHttp(url, 1_000);
      return last === expected ? true : undefined;
    },
    { timeoutMs: deadlineMs, intervalMs: 100, describe: () => (last === undefined ? 'no answer' : `HTTP ${last}`) },
  );
}
