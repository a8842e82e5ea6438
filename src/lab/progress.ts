/** Progress of a long lab operation, reported step by step to whoever drives it (CLI, `up`, tests). */
export interface LabProgress {
  /** Which part of the lab: topology, proxy, sandbox, check, teardown. */
  step: string;
  message: string;
}

export type ProgressFn = (event: LabProgress) => void;

export const silent: ProgressFn = () => undefined;
