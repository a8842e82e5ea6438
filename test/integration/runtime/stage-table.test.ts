/**
 * The stage a runtime call runs in: one `mount -a -T` of the table writeStageTable makes mounts every bind source on
 * its staged path and the overlay on the staged root, in the call's own mount namespace. Paths with white space and
 * backslashes reach the mount intact (fstab's octal escapes); a source that cannot be mounted stops the call before
 * the runtime runs; nothing of the stage is mounted on the host. Root only.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { inPrivateMountNamespace, STAGE_DIR, STAGED_ROOTFS, stagedBinds, writeStageTable } from '../../../src/runtime/oci-cli';

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
  const argv = inPrivateMountNamespace({ stageTable: table, hideUnified: false }, [
    'sh',
    '-c',
    `cat '${d0}/inside' '${f1}' '${STAGED_ROOTFS}/in-rootfs'; echo written > '${STAGED_ROOTFS}/new'`,
  ]);
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
  const argv = inPrivateMountNamespace({ stageTable: table, hideUnified: false }, ['touch', marker]);
  const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8' });
  expect(r.status).not.toBe(0);
  expect(r.stderr).toMatch(/missing/);
  expect(fs.existsSync(marker)).toBe(false);
  expect(hostMountsUnderStage()).toEqual([]);
});

test('a staged overlay must target the staged root', () => {
  expect(() => writeStageTable(path.join(dir, 't'), [], { lower: ['/l'], upper: '/u', work: '/w', target: '/somewhere/else' })).toThrow(
    /must target/,
  );
});
