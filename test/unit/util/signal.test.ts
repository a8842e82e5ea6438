import { spawn, spawnSync } from 'node:child_process';
import { signalProcess } from '../../../src/util/signal';

describe('signalProcess', () => {
  it('delivers to a running process and says so', async () => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, sig) => resolve(sig)));
      await new Promise((resolve) => child.once('spawn', resolve));
      expect(signalProcess(child.pid!, 'SIGTERM')).toBe(true);
      expect(await exited).toBe('SIGTERM');
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('returns false for a process that has ended and been reaped, and throws nothing', () => {
    const ended = spawnSync(process.execPath, ['-e', '0']);
    expect(ended.pid).toBeGreaterThan(0);
    // spawnSync reaps the child, so its pid is free (nothing else reuses it within this test on any sane pid_max).
    expect(signalProcess(ended.pid, 'SIGTERM')).toBe(false);
    expect(signalProcess(ended.pid, 0)).toBe(false);
  });

  it('throws any other failure (an invalid signal is not swallowed)', () => {
    expect(() => signalProcess(process.pid, 'SIGNOPE' as NodeJS.Signals)).toThrow();
  });
});
