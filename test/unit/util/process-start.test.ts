import { spawn } from 'node:child_process';
import { isSameProcess, processStart, startTimeOf } from '../../../src/util/process-start';

describe('processStart', () => {
  const stat = (comm: string, state: string) =>
    `4242 (${comm}) ${state} 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 9 0 987654 3581556 1000 18446744073709551615`;

  test('reads the start time and whether the process runs, whatever its name holds', () => {
    expect(processStart(stat('runsc-sandbox', 'S'))).toEqual({ startTime: '987654', alive: true });
    expect(processStart(stat('a) b (c', 'R'))).toEqual({ startTime: '987654', alive: true });
  });

  test('a zombie or a dead process is not alive', () => {
    expect(processStart(stat('exe', 'Z'))?.alive).toBe(false);
    expect(processStart(stat('exe', 'X'))?.alive).toBe(false);
  });

  test('a cut line reads as gone', () => {
    expect(processStart('4242 (exe) S 1 2')).toBeUndefined();
  });
});

describe('isSameProcess', () => {
  test('a running process is itself; after its end, its pid is no longer it', async () => {
    const child = spawn('sleep', ['30']);
    const pid = child.pid as number;
    const started = startTimeOf(pid);
    expect(started).toMatch(/^\d+$/);
    expect(isSameProcess(pid, started)).toBe(true);
    // Another start time under the same pid is another process: what a reused pid looks like.
    expect(isSameProcess(pid, String(Number(started) + 1))).toBe(false);
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    expect(isSameProcess(pid, started)).toBe(false);
    expect(startTimeOf(pid)).toBe('');
  });

  test('an unknown start time matches no process, not even this one', () => {
    expect(isSameProcess(process.pid, '')).toBe(false);
    expect(isSameProcess(process.pid, startTimeOf(process.pid))).toBe(true);
  });
});
