/**
 * `Connect-Timeout-Ms` (Connect protocol): a positive integer of at most 10 digits, in milliseconds. One parser for
 * the agent and the gateway, and one clamp, because Node fires any timer above 2^31-1 ms after 1 ms.
 */
export const CONNECT_TIMEOUT_HEADER = 'connect-timeout-ms';

/** The longest delay a Node timer honours; a larger deadline is "longer than any timer", not "now". */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export type ConnectTimeout = { ok: true; ms: number | undefined } | { ok: false; message: string };

/** undefined when the header is absent; otherwise a positive integer or the reason it is not one. */
export function parseConnectTimeoutMs(value: string | string[] | undefined): ConnectTimeout {
  if (value === undefined) return { ok: true, ms: undefined };
  if (typeof value !== 'string' || !/^[0-9]{1,10}$/.test(value) || Number(value) === 0) {
    return {
      ok: false,
      message: `Connect-Timeout-Ms ${JSON.stringify(value)} is not valid: expected a positive integer of at most 10 digits (milliseconds)`,
    };
  }
  return { ok: true, ms: Number(value) };
}

/** A deadline as a timer delay: never above what a timer can hold (a longer deadline then simply never fires). */
export function timerDelay(ms: number): number | undefined {
  return ms > MAX_TIMER_MS ? undefined : ms;
}
