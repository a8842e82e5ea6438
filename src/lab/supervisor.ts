/**
 * The lab's stand-in for systemd: runs one service from its unit file, as the proxy host's systemd would.
 * It takes ExecStartPre, ExecStart, Restart=, RestartSec= and LimitNOFILE= from the rendered unit, so the unit
 * itself is what the lab exercises. Run inside the proxy namespace:
 *
 *   node supervisor.js UNIT_FILE --status STATUS_FILE
 *
 * The status file (JSON: supervisor pid, service pid, starts, last exit) lets tests find the running service.
 * SIGTERM or SIGINT stops the service and then the supervisor.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { expandCommand, parseEnvironmentFile, parseServiceUnit, shouldRestart, type ServiceUnit, type UnitCommand } from './unit-file';
import { sleep } from '../util/poll';

export interface SupervisorStatus {
  supervisorPid: number;
  /** The service's main process, absent between a stop and the restart. */
  pid?: number;
  starts: number;
  lastExit?: { code: number | null; signal: string | null; at: string };
  state: 'starting' | 'running' | 'waiting-restart' | 'stopped' | 'failed';
  /** The unit's LimitNOFILE and what the service actually got. */
  fileLimit?: { wanted: FileLimit; applied: FileLimit; note?: string };
}

export interface FileLimit {
  soft: number;
  hard: number;
}

/** The argv that applies an open-file limit to the command (prlimit execs it, so the pid is the service's). */
export function withFileLimit(limit: FileLimit | undefined, argv: string[]): string[] {
  if (!limit) return argv;
  return ['prlimit', `--nofile=${limit.soft}:${limit.hard}`, '--', ...argv];
}

/** The limit to run with when the wanted one cannot be set: as close as the current hard limit allows. */
export function cappedLimit(wanted: FileLimit, currentHard: number): FileLimit {
  return { soft: Math.min(wanted.soft, currentHard), hard: Math.min(wanted.hard, currentHard) };
}

function capture(argv: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('error', () => resolve({ code: 127, stdout }));
    child.on('close', (code) => resolve({ code, stdout }));
  });
}

/**
 * Decides the open-file limit. Raising the hard limit above the current one needs CAP_SYS_RESOURCE, which systemd
 * has on a real host; a machine that withholds it (some container or VM sandboxes) refuses. There the service
 * runs with the highest limit allowed, and the status file says so, instead of never starting.
 */
async function resolveFileLimit(wanted: FileLimit | undefined): Promise<SupervisorStatus['fileLimit']> {
  if (!wanted) return undefined;
  const probe = await capture(withFileLimit(wanted, ['true']));
  if (probe.code === 0) return { wanted, applied: wanted };
  const hard = Number((await capture(['sh', '-c', 'ulimit -Hn'])).stdout.trim());
  const applied = cappedLimit(wanted, Number.isFinite(hard) && hard > 0 ? hard : 1024);
  const note = `LimitNOFILE=${wanted.soft}:${wanted.hard} refused by the kernel (no CAP_SYS_RESOURCE here); running with ${applied.soft}:${applied.hard}`;
  log(note);
  return { wanted, applied, note };
}

function log(message: string): void {
  process.stdout.write(`${new Date().toISOString()} supervisor: ${message}\n`);
}

/** The service's environment for one start: the supervisor's own, then Environment=, then the files (read now). */
function serviceEnvironment(unit: ServiceUnit): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...unit.environment };
  for (const file of unit.environmentFiles) {
    let text: string;
    try {
      text = readFileSync(file.path, 'utf8');
    } catch (err) {
      if (file.optional && (err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw new Error(`EnvironmentFile ${file.path}: ${(err as Error).message}`);
    }
    Object.assign(env, parseEnvironmentFile(text, file.path));
  }
  return env;
}

function runToEnd(command: UnitCommand, env: NodeJS.ProcessEnv): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    const argv = expandCommand(command.argv, env);
    const child = spawn(argv[0]!, argv.slice(1), { stdio: 'inherit', env });
    child.on('error', (err) => {
      log(`${command.argv[0]}: ${err.message}`);
      resolve({ code: 127, signal: null });
    });
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
}

/** ExecStartPost= commands in order, once the main process runs; a failed one stops the service (systemd does too). */
async function runPosts(posts: UnitCommand[], env: NodeJS.ProcessEnv, main: ChildProcess): Promise<void> {
  for (const post of posts) {
    if (main.exitCode !== null || main.signalCode !== null) return;
    const result = await runToEnd(post, env);
    if (result.code !== 0 && !post.ignoreFailure) {
      log(`ExecStartPost ${post.argv.join(' ')} failed (code ${result.code}, signal ${result.signal}): stopping the service`);
      main.kill('SIGTERM');
      return;
    }
  }
}

export async function supervise(unitPath: string, statusPath: string): Promise<void> {
  const unit = parseServiceUnit(readFileSync(unitPath, 'utf8'), unitPath);
  const fileLimit = await resolveFileLimit(unit.limitNoFile);
  const status: SupervisorStatus = { supervisorPid: process.pid, starts: 0, state: 'starting', ...(fileLimit ? { fileLimit } : {}) };
  const save = (): void => {
    writeFileSync(`${statusPath}.tmp`, `${JSON.stringify(status)}\n`);
    renameSync(`${statusPath}.tmp`, statusPath);
  };
  let stopping = false;
  let child: ChildProcess | undefined;
  let wake: (() => void) | undefined;

  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping the service`);
    wake?.();
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      setTimeout(() => child?.kill('SIGKILL'), 5000).unref();
    }
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  save();
  while (!stopping) {
    status.state = 'starting';
    save();
    let preFailed = false;
    let env: NodeJS.ProcessEnv = process.env;
    try {
      env = serviceEnvironment(unit);
    } catch (err) {
      log((err as Error).message);
      status.lastExit = { code: 1, signal: null, at: new Date().toISOString() };
      preFailed = true;
    }
    for (const pre of preFailed ? [] : unit.execStartPre) {
      const result = await runToEnd(pre, env);
      if (result.code !== 0 && !pre.ignoreFailure) {
        log(`ExecStartPre ${pre.argv.join(' ')} failed (code ${result.code}, signal ${result.signal})`);
        status.lastExit = { code: result.code, signal: result.signal, at: new Date().toISOString() };
        preFailed = true;
        break;
      }
    }
    let exit: { code: number | null; signal: NodeJS.Signals | null } = { code: 1, signal: null };
    if (!preFailed && !stopping) {
      const argv = withFileLimit(fileLimit?.applied, expandCommand(unit.execStart.argv, env));
      status.starts += 1;
      const started = spawn(argv[0]!, argv.slice(1), { stdio: 'inherit', env });
      child = started;
      exit = await new Promise((resolve) => {
        started.on('error', (err) => {
          log(`${argv[0]}: ${err.message}`);
          resolve({ code: 127, signal: null });
        });
        started.on('spawn', () => {
          status.pid = started.pid;
          status.state = 'running';
          log(`started ${unit.execStart.argv.join(' ')} as pid ${started.pid} (start ${status.starts})`);
          save();
          void runPosts(unit.execStartPost, env, started);
        });
        started.on('exit', (code, signal) => resolve({ code, signal }));
      });
      child = undefined;
      delete status.pid;
      status.lastExit = { code: exit.code, signal: exit.signal, at: new Date().toISOString() };
      log(`service exited (code ${exit.code}, signal ${exit.signal})`);
    }
    if (stopping) break;
    const ignored = !preFailed && exit.code !== 0 && unit.execStart.ignoreFailure;
    const restart = preFailed
      ? unit.restart !== 'no' && unit.restart !== 'on-success'
      : shouldRestart(unit.restart, ignored ? 0 : exit.code, exit.signal);
    if (!restart) {
      status.state = exit.code === 0 ? 'stopped' : 'failed';
      save();
      return;
    }
    status.state = 'waiting-restart';
    save();
    await Promise.race([sleep(unit.restartSec * 1000), new Promise<void>((resolve) => (wake = resolve))]);
    wake = undefined;
  }
  status.state = 'stopped';
  save();
}

function usage(): never {
  process.stderr.write('usage: supervisor UNIT_FILE --status STATUS_FILE\n');
  process.exit(2);
}

if (require.main === module) {
  const [unitPath, flag, statusPath] = process.argv.slice(2);
  if (!unitPath || flag !== '--status' || !statusPath) usage();
  supervise(unitPath, statusPath).then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`supervisor: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
