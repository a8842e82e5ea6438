/** Shared by the agent's integration tests: a fixture tree, a test user, raw HTTP calls, and the Connect client. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { createClient, type Client } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { Filesystem } from '../../../../src/contract/gen/filesystem_pb';
import { hostAgentEnv, underTripwire } from '../../../helpers/host-shell-tripwire';
import { CLI } from '../../../helpers/cli';

export const REPO = path.resolve(__dirname, '../../../..');

export function sh(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8' });
}

/** A system user made for one test file (and its group), removed with `remove()`. */
export function createUser(prefix: string, home: string): { name: string; uid: number; gid: number; home: string; remove(): void } {
  const name = `${prefix}${process.pid.toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`.slice(0, 30);
  sh('useradd', ['--system', '--no-create-home', '--home-dir', home, '--shell', '/usr/sbin/nologin', '--user-group', name]);
  const uid = Number(sh('id', ['-u', name]).trim());
  const gid = Number(sh('id', ['-g', name]).trim());
  return {
    name,
    uid,
    gid,
    home,
    remove: () => {
      try {
        sh('userdel', [name]);
      } catch {
        /* already gone */
      }
    },
  };
}

export function basic(user: string): string {
  return `Basic ${Buffer.from(`${user}:`).toString('base64')}`;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

/** A raw Connect call: POST JSON with the protocol header unless `headers` overrides it. */
export async function rawCall(
  baseUrl: string,
  procedure: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  const res = await fetch(`${baseUrl}/filesystem.Filesystem/${procedure}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'connect-protocol-version': '1', ...headers },
    body,
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/**
 * A raw call whose body the server may refuse before reading it all (the agent answers and closes): node:http
 * resolves on the response and ignores the write error that the closed connection then gives.
 */
export function rawCallEarlyAnswer(
  baseUrl: string,
  procedure: string,
  body: Buffer | string,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: any }> {
  const url = new URL(`${baseUrl}/filesystem.Filesystem/${procedure}`);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'connect-protocol-version': '1', ...headers },
      },
      (res) => {
        answered = true;
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(parts).toString()) }));
        res.on('error', reject);
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ECONNRESET') reject(err);
    });
    req.on('close', () => {
      if (!answered) reject(new Error(`${procedure}: the connection closed with no answer`));
    });
    req.end(body);
  });
}

export function connectClient(baseUrl: string): Client<typeof Filesystem> {
  return createClient(Filesystem, createConnectTransport({ baseUrl, httpVersion: '1.1', useBinaryFormat: false }));
}

export interface AgentProcess {
  child: ChildProcess;
  port: number;
  /** What the agent printed on stderr so far. */
  stderr(): string;
  /** Stops the agent (SIGTERM unless told); fails when one of its commands read a shell profile of the host. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `sandbox-kit agent` from the built dist and waits for its "agent listening on" line. */
export function startCliAgent(args: string[]): Promise<AgentProcess> {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run 'npm run build' first (npm test does)`);
  return spawnAgent([process.execPath, CLI, 'agent', '--host', '127.0.0.1', '--port', '0', ...args]);
}

/**
 * Starts the built agent with `startAgent(options)` in a process of its own, on 127.0.0.1 and a free port unless the
 * options say otherwise. With `asUser`, node loads every module as root (the checkout may sit where that user cannot
 * read), then drops to the user's uid/gid with no supplementary groups before listening. `preamble` is code run in the
 * agent's process before it starts (a test's probe).
 */
export function startHostAgent(
  options: Record<string, unknown>,
  asUser?: { uid: number; gid: number },
  preamble = '',
): Promise<AgentProcess> {
  const entry = path.join(REPO, 'dist/src/agent/index.js');
  if (!fs.existsSync(entry)) throw new Error(`${entry} is missing: run 'npm run build' first (npm test does)`);
  const drop = asUser ? `process.setgroups([]); process.setgid(${asUser.gid}); process.setuid(${asUser.uid});` : '';
  const script = `
    ${preamble}
    const { startAgent } = require(${JSON.stringify(entry)});
    ${drop}
    startAgent(${JSON.stringify({ host: '127.0.0.1', port: 0, ...options })}).then((a) => {
      console.log('agent listening on ' + a.host + ':' + a.port);
      process.once('SIGTERM', () => a.close().then(() => process.exit(0)));
    }, (e) => { console.error(e.message); process.exit(1); });`;
  return spawnAgent([process.execPath, '-e', script]);
}

/**
 * Starts an agent process on the host and waits for its "agent listening on" line. Every agent a test runs on the
 * host starts here: with an environment of its own and behind the shell-profile tripwire.
 */
export async function spawnAgent(argv: string[]): Promise<AgentProcess> {
  const wire = underTripwire(argv);
  const child = spawn(wire.argv[0]!, wire.argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], env: hostAgentEnv() });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /agent listening on [^\s]+:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`agent exited with ${code} before listening: ${stderr}`)));
  }).catch((err: unknown) => {
    wire.remove();
    throw err;
  });
  return {
    child,
    port,
    stderr: () => stderr,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill(signal);
        await exited;
      }
      const read = wire.tripped();
      wire.remove();
      if (read.length > 0) throw new Error(`a command of the host agent read a shell profile of the host: ${read.join(', ')}`);
    },
  };
}

export function tempDir(prefix: string): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}
