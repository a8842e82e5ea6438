/** Brings a paused sandbox back; resolves once the catalog says it is running (or rejects saying why not). */
export type ResumeSandbox = (sandboxID: string) => Promise<void>;

/**
 * Many requests may arrive for the same paused sandbox at once; they share one resume call,
 * bounded in time so a stuck platform does not hold requests forever.
 */
export class SingleFlightResumer {
  private readonly inFlight = new Map<string, Promise<void>>();

  constructor(
    private readonly resume: ResumeSandbox,
    private readonly timeoutMs: number,
  ) {}

  resumeOnce(sandboxID: string): Promise<void> {
    let pending = this.inFlight.get(sandboxID);
    if (!pending) {
      pending = withTimeout(this.resume(sandboxID), this.timeoutMs, `resuming took longer than ${this.timeoutMs} ms`).finally(() =>
        this.inFlight.delete(sandboxID),
      );
      this.inFlight.set(sandboxID, pending);
    }
    return pending;
  }
}

function withTimeout<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
