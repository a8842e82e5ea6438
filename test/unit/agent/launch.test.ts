import { DEFAULT_PATH, planLaunch, resolveCwd, type LaunchInput } from '../../../src/agent/process/launch';
import { childOomScoreAdj } from '../../../src/agent/oom';

const user = { name: 'alice', uid: 1000, gid: 1000, home: '/home/alice' };
const base: LaunchInput = {
  cmd: '/bin/bash',
  args: ['-l', '-c', 'echo hi'],
  envs: {},
  cwd: undefined,
  user,
  supplementaryGroups: [27, 100],
  sandboxEnv: {},
  defaultWorkdir: undefined,
  pty: undefined,
  agentUid: 0,
  childOomScoreAdj: undefined,
};

test("environment: the user's basics, then /init's env vars, then the request's", () => {
  const plan = planLaunch({ ...base, sandboxEnv: { PATH: '/opt/bin', A: 'init', B: 'init' }, envs: { B: 'request' } });
  expect(plan.env).toEqual({ PATH: '/opt/bin', HOME: '/home/alice', USER: 'alice', LOGNAME: 'alice', A: 'init', B: 'request' });
  expect(planLaunch(base).env.PATH).toBe(DEFAULT_PATH);
});

test("working directory: request (relative to home, ~ expanded), else /init's default, else home", () => {
  expect(resolveCwd('proj', undefined, '/home/alice')).toBe('/home/alice/proj');
  expect(resolveCwd('~/x', '/w', '/home/alice')).toBe('/home/alice/x');
  expect(resolveCwd('/abs', '/w', '/home/alice')).toBe('/abs');
  expect(resolveCwd(undefined, '/w', '/home/alice')).toBe('/w');
  expect(resolveCwd(undefined, undefined, '/home/alice')).toBe('/home/alice');
});

test("another user is switched to with setpriv (uid, gid and supplementary groups); the agent's own user runs directly", () => {
  expect(planLaunch(base)).toMatchObject({
    file: 'setpriv',
    args: ['--reuid', '1000', '--regid', '1000', '--groups', '27,100', '--', '/bin/bash', '-l', '-c', 'echo hi'],
  });
  expect(planLaunch({ ...base, supplementaryGroups: [] }).args).toContain('--clear-groups');
  expect(planLaunch({ ...base, agentUid: 1000 })).toMatchObject({ file: '/bin/bash', args: ['-l', '-c', 'echo hi'] });
});

test('the OOM score the runtime names is set in the child before exec; pty runs under script with the size set first', () => {
  const oom = planLaunch({ ...base, agentUid: 1000, childOomScoreAdj: 500 });
  expect(oom.file).toBe('/bin/sh');
  expect(oom.args.slice(0, 4)).toEqual(['-c', 'echo 500 >/proc/self/oom_score_adj && exec "$@"', 'sh', '/bin/bash']);
  const pty = planLaunch({ ...base, agentUid: 1000, pty: { cols: 100, rows: 30 }, cmd: 'vim', args: ["it's"] });
  expect(pty.file).toBe('script');
  expect(pty.args[4]).toBe(`stty cols 100 rows 30 2>/dev/null; unset SHELL; exec vim 'it'\\''s'`);
});

test("the children's OOM score comes from the runtime's variable, validated", () => {
  expect(childOomScoreAdj({ SANDBOX_KIT_CHILD_OOM_SCORE_ADJ: '500' })).toBe(500);
  expect(childOomScoreAdj({ SANDBOX_KIT_CHILD_OOM_SCORE_ADJ: 'x' })).toBeUndefined();
  expect(childOomScoreAdj({ SANDBOX_KIT_CHILD_OOM_SCORE_ADJ: '5000' })).toBeUndefined();
  expect(childOomScoreAdj({})).toBeUndefined();
});

test('the terminal of a pty child is read from /proc/<pid>/stat (tty_nr), not from its file descriptors', async () => {
  const { ptsOfStat } = await import('../../../src/agent/process/managed-process');
  // pid (comm) state ppid pgrp session tty_nr ...: tty_nr 34816 is major 136, minor 0; 34817 is /dev/pts/1.
  expect(ptsOfStat('120 (bash) S 117 120 120 34817 120 4194560', 117)).toBe('/dev/pts/1');
  expect(ptsOfStat('120 (a) b) (c) S 117 120 120 34816 120 0', 117)).toBe('/dev/pts/0');
  expect(ptsOfStat('120 (bash) S 99 120 120 34817 120 0', 117)).toBeUndefined();
  expect(ptsOfStat('120 (bash) S 117 120 120 0 -1 0', 117)).toBeUndefined();
  // minor 300 on major 137: /dev/pts/556 (minor's high bits sit above bit 20)
  const nr = (137 << 8) | (300 & 0xff) | ((300 & ~0xff) << 12);
  expect(ptsOfStat(`120 (x) S 117 1 1 ${nr} 1 0`, 117)).toBe('/dev/pts/556');
});
