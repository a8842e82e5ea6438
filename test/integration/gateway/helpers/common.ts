import { spawn, type ChildProcess } from 'node:child_process';
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type RequestListener,
  type Server,
} from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { type AgentProcess, startCliAgent } from '../../agent/helpers/common';
import { CLI } from '../../../helpers/cli';

/** Things a test started, stopped in reverse order in afterEach, also when the test failed. */
export class Cleanup {
  private readonly steps: (() => unknown)[] = [];
  add(step: () => unknown): void {
    this.steps.push(step);
  }
  async run(): Promise<void> {
    while (this.steps.length > 0) {
      const step = this.steps.pop() as () => unknown;
      try {
        await step();
      } catch {
        // Keep cleaning up the rest.
      }
    }
  }
}

export interface Upstream {
  server: Server;
  port: number;
  /** TCP connections the upstream accepted so far. */
  connections: number;
  close(): Promise<void>;
}

/** A small node:http server standing in for a sandbox service. */
export async function startUpstream(handler: RequestListener, host = '127.0.0.1', port = 0): Promise<Upstream> {
  const server = createServer(handler);
  const sockets = new Set<Socket>();
  const upstream: Upstream = {
    server,
    port: 0,
    connections: 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  server.on('connection', (socket) => {
    upstream.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  upstream.port = (server.address() as { port: number }).port;
  return upstream;
}

/** A port on which nothing listens (at the time of the call). */
export function closedPort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createTcpServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Call {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** One request on a fresh connection; resolves with the whole response. */
export function call(port: number, { method = 'POST', path = '/', headers = {}, body }: Call = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Polls until check passes (pub/sub and file watching are asynchronous); fails with the last error. */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** Reads a response head and returns the still-streaming response. */
export function openStream(
  port: number,
  options: { method?: string; path?: string; headers?: Record<string, string> },
  body?: (req: import('node:http').ClientRequest) => void,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'POST',
        path: options.path ?? '/',
        headers: options.headers ?? {},
        agent: false,
      },
      resolve,
    );
    req.on('error', reject);
    if (body) body(req);
    else req.end();
  });
}

export interface CliGateway {
  port: number;
  child: ChildProcess;
  output(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** Runs `sandbox-kit gateway` from the build (`env` added to this process's) and waits for its "listening" line. */
export function spawnGateway(args: string[], env: Record<string, string> = {}): Promise<CliGateway> {
  const child = spawn(process.execPath, [CLI, 'gateway', '--host', '127.0.0.1', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`gateway did not start:\n${output}`));
    }, 15_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /gateway listening on [^\s]+:(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({
          port: Number(match[1]),
          child,
          output: () => output,
          async stop() {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
            const forced = setTimeout(() => child.kill('SIGKILL'), 5000);
            const code = await exited;
            clearTimeout(forced);
            return code;
          },
        });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code} before listening:\n${output}`));
    });
  });
}

export type CliAgent = AgentProcess;

/** Runs the real agent (`sandbox-kit agent`) from the build on a free loopback port, as every host agent runs. */
export function spawnAgent(tokenFile: string, defaultUser: string, extra: string[] = []): Promise<CliAgent> {
  return startCliAgent(['--token-file', tokenFile, '--default-user', defaultUser, ...extra]);
}
