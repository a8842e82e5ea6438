/**
 * The agent as the SDK meets it: main.ts bundled by esbuild (as the runtime ships it) and run as a
 * child process on a free port, /init'ed like the platform does, plus a stand-in for the one platform call the
 * SDK makes before talking to an agent (`POST /v2/sandboxes/{id}/connect`), answering with this agent's token.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { bundle, bundleEntries } from '../../../../scripts/bundle';
import { ENVD_VERSION } from '../../../../src/contract/envd-version';
import { spawnAgent } from './common';

const REPO = path.resolve(__dirname, '../../../..');

/** Bundles the agent into `dir/agent.js` as the runtime ships it (scripts/bundle.ts); returns its path. */
export async function bundledAgent(dir: string): Promise<string> {
  const entry = bundleEntries().find((e) => e.name === 'agent');
  if (!entry) throw new Error('scripts/bundle.ts has no agent bundle');
  return bundle(entry, dir);
}

export interface AgentChild {
  child: ChildProcess;
  url: string;
  port: number;
  stderr(): string;
  stop(): Promise<void>;
}

export async function runAgentChild(bundle: string, args: string[] = []): Promise<AgentChild> {
  const agent = await spawnAgent([process.execPath, bundle, '--host', '127.0.0.1', '--port', '0', ...args]);
  return { ...agent, url: `http://127.0.0.1:${agent.port}` };
}

/** POST /init as the platform does it. */
export async function initAgent(url: string, body: Record<string, unknown>, token?: string): Promise<Response> {
  return fetch(`${url}/init`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { 'x-access-token': token } : {}) },
    body: JSON.stringify(body),
  });
}

export interface PlatformStandIn {
  url: string;
  close(): Promise<void>;
}

/** Answers `POST /v2/sandboxes/{id}/connect` with the sandbox's envd version and access token; nothing else. */
export async function platformStandIn(accessToken: string): Promise<PlatformStandIn> {
  const server = http.createServer((req, res) => {
    const m = /^\/v2\/sandboxes\/([a-z0-9]+)\/connect$/.exec(req.url ?? '');
    req.resume();
    if (req.method !== 'POST' || !m) {
      const body = JSON.stringify({ code: 404, message: 'not found' });
      res.writeHead(404, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      return;
    }
    const body = JSON.stringify({
      sandboxID: m[1],
      templateID: 'base',
      clientID: 'local',
      envdVersion: ENVD_VERSION,
      envdAccessToken: accessToken,
    });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * Runs a scenario of sdk-driver.mjs with the unmodified SDK against the agent at `sandboxUrl` (directly, or a
 * gateway in front of it) and returns its result; a scenario that threw fails the call with its error.
 */
export function sdkScenario(
  scenario: string,
  platform: PlatformStandIn,
  sandboxUrl: string,
  args: Record<string, unknown> = {},
  sandboxID = 'sbxagenttest',
): Promise<any> {
  const input = JSON.stringify({ apiUrl: platform.url, sandboxUrl, sandboxID, ...args });
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [path.join(__dirname, 'sdk-driver.mjs'), scenario, input],
      { cwd: REPO, maxBuffer: 64 * 1024 * 1024, timeout: 120_000 },
      (err, stdout, stderr) => {
        if (err && !stdout) return reject(new Error(`sdk-driver ${scenario}: ${err.message}\n${stderr}`));
        let out: { result?: unknown; thrown?: { message: string } };
        try {
          out = JSON.parse(stdout);
        } catch {
          return reject(new Error(`sdk-driver ${scenario} printed no JSON: ${stdout}\n${stderr}`));
        }
        if (out.thrown) return reject(new Error(`sdk-driver ${scenario} threw: ${JSON.stringify(out.thrown)}`));
        resolve(out.result);
      },
    );
  });
}

export function scratchDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}
