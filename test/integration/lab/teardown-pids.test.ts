/**
 * `lab down` stops the processes its state file names, and only those: a pid kept in the file may name another
 * process by then (pids come back quickly on a busy host), so a process whose start time differs is left alone.
 * No namespaces are made: the state file alone names the processes. Root only (`ip netns list`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { labDir } from '../../../src/lab/names';
import { type LabProcess, type LabState, STATE_VERSION, writeState } from '../../../src/lab/state';
import { removeLab } from '../../../src/lab/teardown';
import { isSameProcess, startTimeOf } from '../../../src/util/process-start';

let base: string;
const children: ChildProcess[] = [];

beforeEach(() => {
  base = fs.mkdtempSync(join(tmpdir(), 'sk-labtd-'));
});

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  fs.rmSync(base, { recursive: true, force: true });
});

/** A process that is nobody's lab's: what a reused pid may name. */
function bystander(): { pid: number; startTime: string } {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  children.push(child);
  const pid = child.pid as number;
  return { pid, startTime: startTimeOf(pid) };
}

/** A lab state file naming `processes`, with no namespaces. */
function stateWith(lab: string, processes: LabProcess[]): void {
  const state = { version: STATE_VERSION, name: lab, dir: labDir(lab, base), namespaces: {}, processes } as unknown as LabState;
  writeState(state);
}

test('a pid of the state that names another process now is left alone; the state dir still goes', async () => {
  const other = bystander();
  // The state's process had this pid, but started at another time: it ended, and the pid went to the bystander.
  const stale = String(Number(other.startTime) - 1);
  stateWith('tdstale', [{ role: 'whoami', node: 'web', pid: other.pid, startTime: stale, log: '/dev/null' }]);
  const removed = await removeLab('tdstale', base);
  expect(removed).toMatchObject({ processes: 0, stateDir: true });
  expect(isSameProcess(other.pid, other.startTime)).toBe(true);
  expect(fs.existsSync(labDir('tdstale', base))).toBe(false);
});

test('a process of the state that still runs is stopped', async () => {
  const own = bystander();
  const exited = new Promise((r) => children[0]!.once('exit', (_code, signal) => r(signal)));
  stateWith('tdown', [{ role: 'whoami', node: 'web', pid: own.pid, startTime: own.startTime, log: '/dev/null' }]);
  const removed = await removeLab('tdown', base);
  expect(removed).toMatchObject({ processes: 1, stateDir: true });
  expect(await exited).toBe('SIGTERM');
});
