/**
 * Waiting, in one place: a promise that resolves after a while, and polling until something holds. Everything that
 * waits for a process, a port or a catalog to catch up uses these, so timeouts read the same everywhere.
 */

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface PollOptions {
  /** Give up after this long (default 10 s). */
  timeoutMs?: number;
  /** Pause between attempts (default 50 ms). */
  intervalMs?: number;
}

/**
 * Calls `check` until it returns a value other than undefined and resolves to that value. After `timeoutMs` it
 * throws, naming `what` and the last thing `describe` says about the last attempt (when given).
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  options: PollOptions & { describe?: () => string } = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) {
      const last = options.describe ? ` (last: ${options.describe()})` : '';
      throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${last}`);
    }
    await sleep(options.intervalMs ?? 50);
  }
}

/** Like waitFor, for a check that throws until it passes; the last error is rethrown at the deadline. */
export async function eventually<T>(check: () => Promise<T>, options: PollOptions = {}): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() >= deadline) throw err;
      await sleep(options.intervalMs ?? 50);
    }
  }
}
