/**
 * Where an operation's time goes: a caller may pass a StepTimes to hear each named step's duration (the benchmarks'
 * breakdowns). Without one, timed() just runs the step.
 */
export type StepTimes = (step: string, ms: number) => void;

/** Runs `f`, telling `times` (when given) how long it took under `step`, also when it fails. */
export async function timed<T>(times: StepTimes | undefined, step: string, f: () => Promise<T> | T): Promise<T> {
  if (times === undefined) return f();
  const t0 = performance.now();
  try {
    return await f();
  } finally {
    times(step, performance.now() - t0);
  }
}

/** Sums of each step's times over many runs, in the order steps were first seen. */
export class StepTotals {
  private readonly samples = new Map<string, number[]>();
  private current = new Map<string, number>();

  /** A StepTimes adding into the run under way (see endRun). */
  readonly add: StepTimes = (step, ms) => this.current.set(step, (this.current.get(step) ?? 0) + ms);

  /** Closes the run under way: each step seen in it becomes one sample. */
  endRun(): void {
    for (const [step, ms] of this.current) {
      const list = this.samples.get(step) ?? [];
      list.push(ms);
      this.samples.set(step, list);
    }
    this.current = new Map();
  }

  /** Forgets the run under way (a warm-up). */
  dropRun(): void {
    this.current = new Map();
  }

  /** Each step's median over the runs it appeared in. */
  medians(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [step, list] of this.samples) {
      const sorted = [...list].sort((a, b) => a - b);
      out.set(step, sorted[Math.floor(sorted.length / 2)]!);
    }
    return out;
  }
}
