/**
 * The stage a runtime call runs in: the table writeStageTable makes mounts every bind source on its staged path and
 * the overlay on the staged root, in the call's own mount namespace, through the build's private-mounts program and,
 * where it is missing, through `unshare` and `mount -a -T`. Paths with white space and backslashes reach the mount
 * intact (fstab's octal escapes); a source that cannot be mounted stops the call before the runtime runs; a hidden
 * directory is an empty tmpfs inside; nothing of the stage is mounted on the host. What private-mounts refuses (a line
 * it does not stage, a bad escape, a usage error) stops the call with the reason. Root only.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  inPrivateMountNamespace,
  privateMountsProgram,
  STAGE_DIR,
  STAGED_ROOTFS,
  stagedBinds,
  writeStageTable,
} from '../../../src/runtime/oci-cli';

let dir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-stage-'));
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function hostMountsUnderStage(): string[] {
  return fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((l) => l.split(' ')[4]?.startsWith(STAGE_DIR));
}

const PROGRAM = privateMountsProgram();

test('the build has the private-mounts program', () => {
  expect(PROGRAM).toBeDefined();
});

describe.each([
  ['private-mounts', PROGRAM ?? '(missing)'],
  ['unshare and mount -a -T', null],
])('through %s', (_, program) => {
  test('binds and the overlay are staged by one mount table, odd paths intact; the host sees none of it', () => {
    const odd = path.join(dir, 'a dir\twith\\odd name');
    fs.mkdirSync(odd);
    fs.writeFileSync(path.join(odd, 'inside'), 'from the directory\n');
    const file = path.join(dir, 'a file with spaces');
    fs.writeFileSync(file, 'from the file\n');
    const layer = path.join(dir, 'lower');
    fs.mkdirSync(layer);
    fs.writeFileSync(path.join(layer, 'in-rootfs'), 'from the layer\n');
    for (const d of ['upper', 'work']) fs.mkdirSync(path.join(dir, d));
    const table = path.join(dir, 'stage.fstab');
    const overlay = { lower: [layer], upper: path.join(dir, 'upper'), work: path.join(dir, 'work'), target: STAGED_ROOTFS };
    const staged = stagedBinds([odd, file]);
    expect(staged.map((b) => b.target)).toEqual([`${STAGE_DIR}/d0`, `${STAGE_DIR}/f1`]);
    writeStageTable(table, staged, overlay);
    const [d0, f1] = staged.map((b) => b.target);
    const argv = inPrivateMountNamespace(
      { stageTable: table, hideUnified: false },
      ['sh', '-c', `cat '${d0}/inside' '${f1}' '${STAGED_ROOTFS}/in-rootfs'; echo written > '${STAGED_ROOTFS}/new'`],
      program,
    );
    const out = execFileSync(argv[0]!, argv.slice(1), { encoding: 'utf8' });
    expect(out).toBe('from the directory\nfrom the file\nfrom the layer\n');
    // The overlay's writes went to its upper directory; on the host the stage's mount points are empty.
    expect(fs.readFileSync(path.join(dir, 'upper', 'new'), 'utf8')).toBe('written\n');
    expect(hostMountsUnderStage()).toEqual([]);
    expect(fs.readdirSync(d0!)).toEqual([]);
  });

  test('a source that cannot be mounted stops the call before its command runs', () => {
    const table = path.join(dir, 'stage.fstab');
    writeStageTable(table, stagedBinds([path.join(dir, 'missing')]), undefined);
    const marker = path.join(dir, 'ran');
    const argv = inPrivateMountNamespace({ stageTable: table, hideUnified: false }, ['touch', marker], program);
    const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8' });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/missing/);
    expect(fs.existsSync(marker)).toBe(false);
    expect(hostMountsUnderStage()).toEqual([]);
  });

  test('/proc/sys/net is hidden by an empty tmpfs inside, not on the host', () => {
    // The unified hierarchy's hiding (crun on a hybrid host) is the same code path, run by every runtime call there.
    const argv = inPrivateMountNamespace(
      { hideUnified: false, hideNetSysctls: true },
      ['sh', '-c', 'ls -A /proc/sys/net; stat -f -c %T /proc/sys/net'],
      program,
    );
    expect(execFileSync(argv[0]!, argv.slice(1), { encoding: 'utf8' })).toBe('tmpfs\n');
    expect(fs.readdirSync('/proc/sys/net').length).toBeGreaterThan(0);
    expect(execFileSync('stat', ['-f', '-c', '%T', '/proc/sys/net'], { encoding: 'utf8' })).toBe('proc\n');
  });
});

describe('private-mounts refuses what it does not stage, before its program runs', () => {
  const run = (args: string[]) => {
    const marker = path.join(dir, 'ran');
    const r = spawnSync(PROGRAM!, [...args, '--', 'touch', marker], { encoding: 'utf8' });
    return { status: r.status, stderr: r.stderr, ran: fs.existsSync(marker) };
  };

  test.each([
    ['a tmpfs of another type line', 'tmpfs /run/sandbox-kit-stage/d0 tmpfs size=1m 0 0\n', /only 'none bind' and 'overlay' entries/],
    ['a bind with other options', '/ /run/sandbox-kit-stage/d0 none bind,ro 0 0\n', /only 'none bind' and 'overlay' entries/],
    ['a bad escape', '/a\\9x /run/sandbox-kit-stage/d0 none bind 0 0\n', /line 1: expected SOURCE TARGET TYPE OPTIONS 0 0/],
    ['a short line', '/ /run/sandbox-kit-stage/d0 none\n', /line 1: expected SOURCE TARGET TYPE OPTIONS 0 0/],
  ])('%s', (_, line, reason) => {
    const table = path.join(dir, 'stage.fstab');
    fs.writeFileSync(table, line);
    const r = run(['--table', table]);
    expect(r).toEqual({ status: 1, stderr: expect.stringMatching(reason), ran: false });
    expect(hostMountsUnderStage()).toEqual([]);
  });

  test('a missing table, a usage error, a program that does not exist', () => {
    expect(run(['--table', path.join(dir, 'none')])).toEqual({ status: 1, stderr: expect.stringMatching(/No such file/), ran: false });
    expect(run(['--tmpfs', '/x'])).toEqual({ status: 2, stderr: expect.stringMatching(/^usage: private-mounts/), ran: false });
    expect(run(['--bogus'])).toEqual({ status: 2, stderr: expect.stringMatching(/^usage: private-mounts/), ran: false });
    const r = spawnSync(PROGRAM!, ['--', path.join(dir, 'no-such-program')], { encoding: 'utf8' });
    expect(r.status).toBe(127);
    expect(r.stderr).toMatch(/no-such-program: No such file/);
  });
});

test('a staged overlay must target the staged root', () => {
  expect(() => writeStageTable(path.join(dir, 't'), [], { lower: ['/l'], upper: '/u', work: '/w', target: '/somewhere/else' })).toThrow(
    /must target/,
  );
});
