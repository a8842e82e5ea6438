/**
 * The spawn helper (src/util/spawn-helper.ts): a command started through it gives what it would have given started
 * from this process (output, exit code, input, environment, deadline, abort, a program that does not exist, output
 * to a file), and it is the helper that forks it. A helper that dies fails the commands it had (code 125, with the
 * reason) and the next command starts a new one; signals for the process group leave it running; released, it lets
 * the commands under way answer, exits, and commands start here again; a process that ends or dies leaves it to
 * finish its commands (they are not killed) and then it exits; an idle helper does not keep its process alive. Needs
 * the build's dist/bundle/spawn-helper.js (npm run build).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ABORTED, execHere, NOT_STARTED, TIMED_OUT } from '../../../src/util/exec-here';
import { exec, useSpawnHelper } from '../../../src/util/exec';
import { defaultSpawnHelperProgram, HELPER_LOST, SpawnHelper } from '../../../src/util/spawn-helper';

jest.setTimeout(60_000);

const PROGRAM = defaultSpawnHelperProgram();
let scratch: string;
const helpers: SpawnHelper[] = [];
const started: number[] = [];

beforeAll(() => {
  if (!fs.existsSync(PROGRAM)) throw new Error(`${PROGRAM} is missing: npm run build`);
});

beforeEach(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-spawn-helper-test-'));
});

afterEach(async () => {
  for (const h of helpers.splice(0)) await h.close();
  for (const pid of started.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
  fs.rmSync(scratch, { recursive: true, force: true });
});

function helper(): SpawnHelper {
  const h = new SpawnHelper(PROGRAM);
  helpers.push(h);
  return h;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function gone(pid: number, withinMs = 10_000): Promise<boolean> {
  for (const until = Date.now() + withinMs; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) if (!alive(pid)) return true;
  return false;
}

/** The parent pid of the process that runs `sh -c 'echo $PPID'`. */
async function parentOf(run: (argv: string[]) => Promise<{ stdout: string }>): Promise<number> {
  return Number((await run(['sh', '-c', 'echo $PPID'])).stdout.trim());
}

describe('a command started through the helper', () => {
  it('gives what it gives started here', async () => {
    const h = helper();
    const cases: Array<[string[], Parameters<typeof execHere>[1]?]> = [
      [['sh', '-c', 'cat; echo to-stderr >&2; exit 3'], { input: 'the input\n' }],
      [['sh', '-c', 'echo "$ONLY_THIS" "[$HOME]"'], { env: { ONLY_THIS: 'set', PATH: '/usr/bin:/bin' } }],
      [['printf', '%s', 'ünïcode\n']],
      [['sh', '-c', 'exec 1>&-; echo closed >&2']],
    ];
    for (const [argv, options] of cases) expect(await h.run(argv, options)).toEqual(await execHere(argv, options));
  });

  it('is forked by the helper, not by this process', async () => {
    const h = helper();
    const parent = await parentOf((argv) => h.run(argv));
    expect(parent).toBe(h.pid);
    expect(parent).not.toBe(process.pid);
    expect(await parentOf((argv) => execHere(argv))).toBe(process.pid);
  });

  it('is killed at its deadline (124) and by its abort signal (130), and a program that does not exist fails with 127', async () => {
    const h = helper();
    const t0 = Date.now();
    expect(await h.run(['sleep', '30'], { timeoutMs: 200 })).toEqual({ code: TIMED_OUT, stdout: '', stderr: 'timed out\n' });
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 200);
    expect(await h.run(['sleep', '30'], { signal: abort.signal })).toEqual({ code: ABORTED, stdout: '', stderr: 'aborted\n' });
    const before = new AbortController();
    before.abort();
    expect((await h.run(['sleep', '30'], { signal: before.signal })).code).toBe(ABORTED);
    expect(Date.now() - t0).toBeLessThan(10_000);
    const missing = await h.run([path.join(scratch, 'no-such-program')]);
    expect(missing.code).toBe(NOT_STARTED);
    expect(missing.stderr).toContain('ENOENT');
    // Still the same helper.
    expect(await parentOf((argv) => h.run(argv))).toBe(h.pid);
  });

  it('appends its output to a file, with /dev/null for stdin, when asked', async () => {
    const h = helper();
    const file = path.join(scratch, 'out.log');
    fs.writeFileSync(file, 'before\n');
    const argv = ['sh', '-c', 'echo out; echo err >&2; readlink /proc/self/fd/0'];
    expect(await h.run(argv, { outputFile: file })).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(fs.readFileSync(file, 'utf8')).toBe('before\nout\nerr\n/dev/null\n');
    const unwritable = await h.run(argv, { outputFile: path.join(scratch, 'no-such-dir', 'out.log') });
    expect(unwritable.code).toBe(NOT_STARTED);
    expect(unwritable.stderr).toContain('ENOENT');
  });

  it('runs alongside others: each answer goes to its own request', async () => {
    const h = helper();
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => h.run(['sh', '-c', `sleep 0.0${i % 10}; echo ${i}`])));
    expect(results.map((r) => r.stdout)).toEqual(Array.from({ length: 40 }, (_, i) => `${i}\n`));
  });
});

describe('the helper process', () => {
  it('fails the commands it had when it dies (125, with the reason), and the next command starts a new one', async () => {
    const h = helper();
    const first = h.pid ?? (await parentOf((argv) => h.run(argv)));
    const pidFile = path.join(scratch, 'sleep.pid');
    const pending = h.run(['sh', '-c', `echo $$ > ${pidFile}; exec sleep 30`]);
    while (!fs.existsSync(pidFile) || fs.readFileSync(pidFile, 'utf8') === '') await new Promise((r) => setTimeout(r, 20));
    // Orphaned by the helper's death: removed at the end.
    started.push(Number(fs.readFileSync(pidFile, 'utf8')));
    process.kill(first, 'SIGKILL');
    const lost = await pending;
    expect(lost.code).toBe(HELPER_LOST);
    expect(lost.stderr).toMatch(/spawn helper did not answer: it exited \(SIGKILL\)/);
    const second = await parentOf((argv) => h.run(argv));
    expect(second).not.toBe(first);
    expect(second).toBe(h.pid);
  });

  it('keeps running when its process group is sent SIGINT and SIGTERM', async () => {
    const h = helper();
    const pid = await parentOf((argv) => h.run(argv));
    process.kill(pid, 'SIGINT');
    process.kill(pid, 'SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    expect(await parentOf((argv) => h.run(argv))).toBe(pid);
  });

  it('exits once released; commands then start here again', async () => {
    const release = useSpawnHelper(PROGRAM);
    expect(release).toBeDefined();
    const pid = await parentOf((argv) => exec(argv));
    expect(pid).not.toBe(process.pid);
    // A second user keeps it until both have released it.
    const second = useSpawnHelper(PROGRAM)!;
    await release!();
    expect(await parentOf((argv) => exec(argv))).toBe(pid);
    await second();
    expect(alive(pid)).toBe(false);
    expect(await parentOf((argv) => exec(argv))).toBe(process.pid);
  });

  it('lets the commands under way answer before it exits when released', async () => {
    const release = useSpawnHelper(PROGRAM)!;
    const pid = await parentOf((argv) => exec(argv));
    const underWay = exec(['sh', '-c', 'sleep 0.5; echo finished']);
    await release();
    expect(await underWay).toEqual({ code: 0, stdout: 'finished\n', stderr: '' });
    expect(alive(pid)).toBe(false);
  });

  it('is not used where its program is not built', async () => {
    expect(useSpawnHelper(path.join(scratch, 'missing.js'))).toBeUndefined();
    expect(await parentOf((argv) => exec(argv))).toBe(process.pid);
  });

  /** A node process that uses the helper, prints its pid, starts `command` through it, then does `then`. */
  function user(command: string, then: string): Promise<{ helperPid: number; code: number | null; signal: string | null }> {
    const script = `
      const { exec, useSpawnHelper } = require(${JSON.stringify(path.resolve(__dirname, '../../../dist/src/util/exec.js'))});
      useSpawnHelper(${JSON.stringify(PROGRAM)});
      exec(['sh', '-c', 'echo $PPID']).then((r) => {
        process.stdout.write(r.stdout);
        exec(['sh', '-c', ${JSON.stringify(command)}]);
        ${then}
      });`;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    started.push(child.pid!);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ helperPid: Number(out.trim()), code, signal })));
  }

  it('outlives a process that dies until its commands end, without killing them, then exits', async () => {
    const marker = path.join(scratch, 'done');
    const ended = await user(`sleep 1; echo finished > ${marker}`, `setTimeout(() => process.kill(process.pid, 'SIGKILL'), 100);`);
    expect(ended.signal).toBe('SIGKILL');
    started.push(ended.helperPid);
    expect(ended.helperPid).toBeGreaterThan(0);
    expect(alive(ended.helperPid)).toBe(true);
    expect(await gone(ended.helperPid)).toBe(true);
    expect(fs.readFileSync(marker, 'utf8')).toBe('finished\n');
  });

  it('does not keep an idle process alive: a process with nothing left to do ends, and so does the helper', async () => {
    const ended = await user('true', '');
    expect(ended.code).toBe(0);
    started.push(ended.helperPid);
    expect(await gone(ended.helperPid)).toBe(true);
  });
});
