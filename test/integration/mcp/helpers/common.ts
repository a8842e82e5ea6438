import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Agent, fetch as undiciFetch } from 'undici';

export const REPO = path.resolve(__dirname, '..', '..', '..', '..');
export const ECHO_SERVER = path.join(__dirname, '..', 'fixtures', 'echo-server.js');
/** A custom server's runCmd that starts the echo fixture with this very node. */
export const ECHO_RUN_CMD = `'${process.execPath}' '${ECHO_SERVER}'`;

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
}

/** Connections never kept for a later request (see freshFetch). */
const unpooled = new Agent({ pipelining: 0 });

/** `fetch` on a connection of its own: a probe of a port whose server was just killed never reuses one of its. */
export function freshFetch(url: string, init: RequestInit = {}): Promise<Response> {
  return undiciFetch(url, { ...(init as object), dispatcher: unpooled }) as unknown as Promise<Response>;
}

/**
 * A client of the gateway at `url`, as MCP clients are: its connections kept alive between its requests, in a pool of
 * its own that closes with it, so a client made after a gateway was killed and started again never sends on a
 * connection to the one before.
 */
export async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'sandbox-kit-test', version: '1' });
  const pool = new Agent();
  const fetch = ((input: string | URL, init?: RequestInit) =>
    undiciFetch(input, { ...(init as object), dispatcher: pool })) as unknown as typeof globalThis.fetch;
  try {
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } }, fetch }),
    );
  } catch (err) {
    await pool.destroy();
    throw err;
  }
  const close = client.close.bind(client);
  client.close = async () => {
    await close();
    await pool.destroy();
  };
  return client;
}

export function text(result: unknown): string {
  return ((result as CallToolResult).content ?? []).map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
