import { oomKillCount, processStart } from '../../../src/runtime/end-watch';

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

describe('oomKillCount', () => {
  test('cgroup v1 memory.oom_control and v2 memory.events', () => {
    expect(oomKillCount('oom_kill_disable 0\nunder_oom 0\noom_kill 1\n')).toBe(1);
    expect(oomKillCount('low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n')).toBe(2);
    expect(oomKillCount('oom_kill_disable 0\nunder_oom 0\n')).toBe(0);
  });
});
