/** Runs the named steps of a long operation, printing each one's progress and time, and keeping the times. */
import type { ProgressFn } from '../lab';

export async function timedStep<T>(name: string, progress: ProgressFn, timings: Record<string, number>, run: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const result = await run();
  const seconds = Math.round((Date.now() - started) / 100) / 10;
  timings[name] = seconds;
  progress({ step: name, message: `done in ${seconds.toFixed(1)} s` });
  return result;
}
