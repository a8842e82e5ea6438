/**
 * Process.Start: starts the command as the request's user and streams its events: the start event with the pid
 * first, then output, keepalives and the end event. `Connect-Timeout-Ms` is the process's own deadline: past it the
 * process group is killed and the end event says so. A client that goes away leaves the process running.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { create } from '@bufbuild/protobuf';
import type { HandlerContext } from '@connectrpc/connect';
import { Code } from '../../contract/connect-codes';
import { AgentError } from '../errors';
import { timerDelay } from '../../contract/connect-timeout';
import { requestUser } from '../auth';
import { callTimeoutMs, keepaliveMs, type AgentServices } from '../call-context';
import { type StartRequest, type StartResponse, StartResponseSchema } from '../../contract/gen/process_pb';
import { planLaunch } from './launch';
import { ManagedProcess } from './managed-process';
import { processEvents, startEvent } from './event-stream';

export async function* start(svc: AgentServices, req: StartRequest, ctx: HandlerContext): AsyncGenerator<StartResponse> {
  const config = req.process;
  if (!config || config.cmd === '') throw new AgentError(Code.InvalidArgument, 'field "process.cmd" must name the program to run');
  const user = requestUser(ctx.requestHeader.get('authorization'), svc.accounts, svc.state.defaultUser);
  const size = req.pty?.size;
  const plan = planLaunch({
    cmd: config.cmd,
    args: config.args,
    envs: config.envs,
    cwd: config.cwd,
    user,
    supplementaryGroups: svc.accounts.supplementaryGroups(user),
    sandboxEnv: svc.state.envVars,
    defaultWorkdir: svc.state.defaultWorkdir,
    pty: req.pty ? { cols: size?.cols || 80, rows: size?.rows || 24 } : undefined,
    agentUid: svc.agentUid,
    childOomScoreAdj: svc.childOomScoreAdj,
  });
  if (config.cwd) checkCwd(plan.cwd);
  else if (!isDirectory(plan.cwd)) plan.cwd = '/'; // a user without a home (nobody) still runs, as login does
  checkCommand(config.cmd, plan.env.PATH ?? '', plan.cwd);

  let proc: ManagedProcess;
  try {
    proc = await ManagedProcess.start(
      plan,
      { cmd: config.cmd, args: config.args, envs: config.envs, cwd: config.cwd },
      req.tag,
      req.pty !== undefined,
      req.stdin !== false,
    );
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new AgentError(
      code === 'EACCES' ? Code.PermissionDenied : code === 'ENOENT' ? Code.NotFound : Code.Internal,
      `cannot start ${JSON.stringify(config.cmd)}: ${(err as Error).message}`,
    );
  }
  svc.processes.add(proc);

  const ms = callTimeoutMs(ctx);
  const delay = ms === undefined ? undefined : timerDelay(ms);
  const reason = `the process ran past the call's Connect-Timeout-Ms (${ms} ms) and was killed`;
  let expired = false;
  const timer =
    delay === undefined
      ? undefined
      : setTimeout(() => {
          expired = true;
          proc.signal('SIGKILL', reason);
        }, delay);
  void proc.exited.then(() => clearTimeout(timer));

  yield create(StartResponseSchema, { event: startEvent(proc.pid) });
  for await (const event of processEvents(proc, keepaliveMs(ctx), ctx.signal)) {
    // Past the deadline the call itself fails, as the protocol says, whichever of the kill's end event and the
    // client's own timer comes first.
    if (expired) throw new AgentError(Code.DeadlineExceeded, reason);
    yield create(StartResponseSchema, { event });
  }
}

function isDirectory(p: string): boolean {
  return fs.statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

function checkCwd(cwd: string): void {
  let st: fs.Stats;
  try {
    st = fs.statSync(cwd);
  } catch {
    throw new AgentError(
      Code.InvalidArgument,
      `working directory ${JSON.stringify(cwd)} does not exist (field "process.cwd", relative to the user's home)`,
    );
  }
  if (!st.isDirectory()) throw new AgentError(Code.InvalidArgument, `working directory ${JSON.stringify(cwd)} is not a directory`);
}

/** Fails before anything starts when the program cannot be found, as a shell would say "command not found". */
function checkCommand(cmd: string, searchPath: string, cwd: string): void {
  const candidates = cmd.includes('/')
    ? [path.resolve(cwd, cmd)]
    : searchPath
        .split(':')
        .filter(Boolean)
        .map((d) => path.join(d, cmd));
  for (const c of candidates) {
    try {
      const st = fs.statSync(c);
      if (st.isFile()) return;
    } catch {
      /* next */
    }
  }
  throw new AgentError(
    Code.NotFound,
    cmd.includes('/')
      ? `command ${JSON.stringify(cmd)} does not exist`
      : `command ${JSON.stringify(cmd)} was not found in PATH (${searchPath})`,
  );
}
