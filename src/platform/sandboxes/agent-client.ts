/**
 * The platform's client for the agent in a sandbox (envd's surface): `GET /health`, `POST /init`, a Stat, and
 * `process.Process/Start` through the generated Connect client with JSON, as the E2B SDK calls it.
 */
import * as net from 'node:net';
import { ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { codeToString } from '@connectrpc/connect/protocol-connect';
import { Process } from '../../contract/gen/process_pb';
import { ACCESS_TOKEN_HEADER } from '../../contract/headers';
import { sleep } from '../../util/poll';

export interface InitRequest {
  accessToken: string;
  envVars: Record<string, string>;
  defaultUser: string;
  defaultWorkdir?: string;
}

export interface ProcessSpec {
  cmd: string;
  args: string[];
  envs?: Record<string, string>;
  cwd?: string;
  /** Sent as Basic auth, as E2B clients name the user; the agent's default user otherwise. */
  user?: string;
  tag?: string;
  /** Every chunk of output as it comes (the sandbox log follows the start command with it). */
  onOutput?(stream: 'stdout' | 'stderr' | 'pty', text: string): void;
}

export interface ProcessResult {
  exitCode: number;
  /** The agent's reason when the process could not run or ended abnormally. */
  error?: string;
  /** The last bytes of stdout and stderr, interleaved, for error messages. */
  outputTail: string;
}

export interface RunningProcess {
  /** Resolves with the process ID once the agent started it; rejects if it could not. */
  started: Promise<number>;
  /** Resolves when the process ends (or rejects when the stream breaks). */
  done: Promise<ProcessResult>;
  /** Stops reading; the process itself is the agent's. */
  abort(): void;
}

const OUTPUT_TAIL_BYTES = 2048;

/** A call to the agent that failed: the agent's answer or why there was none. */
export class AgentCallError extends Error {}

/** A command `run` stopped because it was still running when its time was up. */
export class CommandStillRunning extends AgentCallError {}

function authHeaders(token: string | undefined, user?: string): Record<string, string> {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers[ACCESS_TOKEN_HEADER] = token;
  if (user !== undefined) headers.authorization = `Basic ${Buffer.from(`${user}:`).toString('base64')}`;
  return headers;
}

async function describeFailure(res: Response): Promise<string> {
  const text = (await res.text().catch(() => '')).slice(0, 300);
  try {
    const body = JSON.parse(text) as { code?: unknown; message?: unknown };
    if (typeof body.message === 'string') return `${res.status} ${String(body.code ?? '')}: ${body.message}`.replace(' : ', ': ');
  } catch {
    // not JSON
  }
  return `${res.status}${text ? `: ${text}` : ''}`;
}

/** Why a TCP connection to `host:port` could not be made within `timeoutMs`, or undefined once one was (and closed). */
function connectProblem(host: string, port: number, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: timeoutMs });
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(`no TCP connection within ${timeoutMs} ms`);
    });
    socket.once('error', (err) => resolve(err.message));
  });
}

export class AgentClient {
  /** e.g. http://10.11.0.2:49983 */
  constructor(readonly baseUrl: string) {}

  /**
   * Polls `GET /health` until it answers 2xx. Each attempt has its own short timeout: a frozen sandbox still
   * completes TCP handshakes, so only an HTTP answer counts. While the agent is not listening yet, an attempt is a
   * bare TCP connect (refused at once): a refused `fetch` costs the platform about 1 ms of CPU, a refused connect a
   * quarter of that, and a create makes 13-18 attempts while its agent starts.
   */
  async waitForHealth(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const { hostname, port } = new URL(this.baseUrl);
    let delay = 1;
    let last = 'no answer yet';
    while (true) {
      signal?.throwIfAborted();
      const left = deadline - Date.now();
      if (left <= 0) throw new AgentCallError(`the agent at ${this.baseUrl} did not answer GET /health within ${timeoutMs} ms (${last})`);
      const refused = await connectProblem(hostname, Number(port), Math.min(1000, left));
      if (refused !== undefined) {
        last = refused;
        await sleep(delay);
        delay = Math.min(delay * 2, 4);
        continue;
      }
      try {
        const res = await fetch(`${this.baseUrl}/health`, {
          signal: AbortSignal.any([AbortSignal.timeout(Math.min(1000, left)), ...(signal ? [signal] : [])]),
        });
        await res.body?.cancel().catch(() => {});
        if (res.ok) return;
        last = `it answered ${res.status}`;
      } catch (err) {
        signal?.throwIfAborted();
        last = (err as Error & { cause?: Error }).cause?.message ?? (err as Error).message;
      }
      await sleep(delay);
      // Capped low: the agent usually answers within tens of milliseconds of its start, and a refused connect is cheap.
      delay = Math.min(delay * 2, 4);
    }
  }

  /** Hands the agent its token, env vars and default user; `currentToken` when the agent already has one (resume). */
  async init(request: InitRequest, currentToken?: string, timeoutMs = 10_000): Promise<void> {
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}/init`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...authHeaders(currentToken) },
        body: JSON.stringify(request),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw new AgentCallError(`POST /init to the agent at ${this.baseUrl} failed: ${(err as Error).message}`);
    }
    if (!res.ok) throw new AgentCallError(`the agent refused POST /init: ${await describeFailure(res)}`);
    await res.body?.cancel().catch(() => {});
  }

  /** A `filesystem.Filesystem/Stat` of `path` whose answer is read and dropped (the warm pool runs one in each of its sandboxes). */
  async stat(token: string, path: string, timeoutMs = 10_000): Promise<void> {
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}/filesystem.Filesystem/Stat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'connect-protocol-version': '1', ...authHeaders(token) },
        body: JSON.stringify({ path }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw new AgentCallError(`Stat of ${path} at the agent at ${this.baseUrl} failed: ${(err as Error).message}`);
    }
    if (!res.ok) throw new AgentCallError(`the agent refused a Stat of ${path}: ${await describeFailure(res)}`);
    await res.body?.cancel().catch(() => {});
  }

  /** Starts a process through `process.Process/Start` and follows its events. */
  start(token: string, spec: ProcessSpec): RunningProcess {
    const controller = new AbortController();
    let resolveStarted!: (pid: number) => void;
    let rejectStarted!: (err: Error) => void;
    const started = new Promise<number>((resolve, reject) => {
      resolveStarted = resolve;
      rejectStarted = reject;
    });
    started.catch(() => {});
    const done = this.follow(token, spec, controller.signal, resolveStarted).catch((err: Error) => {
      rejectStarted(err);
      throw err;
    });
    done.then(
      () => rejectStarted(new AgentCallError('the process stream ended before its start event')),
      () => {},
    );
    return { started, done, abort: () => controller.abort() };
  }

  /**
   * Runs a command with bash (as E2B clients do) and waits for its exit; one still running after `timeoutMs` is stopped
   * (CommandStillRunning).
   */
  async run(token: string, command: string, options: Omit<ProcessSpec, 'cmd' | 'args'> & { timeoutMs: number }): Promise<ProcessResult> {
    const proc = this.start(token, { ...options, cmd: '/bin/bash', args: ['-l', '-c', command] });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      proc.abort();
    }, options.timeoutMs);
    try {
      return await proc.done;
    } catch (err) {
      if (timedOut) throw new CommandStillRunning(`the command was still running after ${options.timeoutMs} ms and was stopped`);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  private async follow(token: string, spec: ProcessSpec, signal: AbortSignal, onStart: (pid: number) => void): Promise<ProcessResult> {
    const client = createClient(Process, createConnectTransport({ baseUrl: this.baseUrl, httpVersion: '1.1', useBinaryFormat: false }));
    const request = {
      process: { cmd: spec.cmd, args: spec.args, envs: spec.envs ?? {}, ...(spec.cwd ? { cwd: spec.cwd } : {}) },
      ...(spec.tag ? { tag: spec.tag } : {}),
    };
    let tail = Buffer.alloc(0);
    let result: ProcessResult | undefined;
    try {
      for await (const { event } of client.start(request, { signal, headers: authHeaders(token, spec.user) })) {
        const e = event?.event;
        if (e?.case === 'start') onStart(e.value.pid);
        if (e?.case === 'data' && e.value.output.case) {
          tail = Buffer.concat([tail, e.value.output.value]).subarray(-OUTPUT_TAIL_BYTES);
          spec.onOutput?.(e.value.output.case, Buffer.from(e.value.output.value).toString('utf8'));
        }
        if (e?.case === 'end') result = { exitCode: e.value.exitCode, error: e.value.error, outputTail: '' };
      }
    } catch (err) {
      const e = ConnectError.from(err);
      throw new AgentCallError(`process.Process/Start failed: ${codeToString(e.code)}: ${e.rawMessage}`);
    }
    if (!result) throw new AgentCallError('the process stream ended without an end event');
    return { ...result, outputTail: tail.toString('utf8') };
  }
}
