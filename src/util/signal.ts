/**
 * A signal to a process that may end at any moment: one found running a moment ago (a supervisor's child its parent
 * stops first, a service that exits on its own) is gone by the time the signal is sent. That is not an error: the
 * result says whether the signal was delivered. Any other failure (EPERM: not ours to signal) is thrown.
 */
export function signalProcess(pid: number, sig: NodeJS.Signals | 0): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
}
