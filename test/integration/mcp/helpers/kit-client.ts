/**
 * Reaching a sandbox's MCP gateway through the kit's gateway, as a user does: the unmodified E2B SDK in a child
 * process (sdk-mcp-child.ts), the MCP SDK client with the sandbox token and the MCP token, and the gateway's /status.
 */
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { runScript } from './node-script';

export interface KitOpts {
  apiKey: string;
  apiUrl: string;
  /** The kit's gateway. */
  sandboxUrl: string;
}

export type SdkAnswer = { ok: boolean; value?: any; name?: string; message?: string };

/** One SDK call (sdk-mcp-child.ts's ops) in a plain Node process. */
export async function sdk(opts: KitOpts, request: Record<string, unknown>): Promise<SdkAnswer> {
  const result = await runScript(path.join(__dirname, 'sdk-mcp-child.ts'), [JSON.stringify({ opts, ...request })], {}, 300_000);
  const line = result.stdout.split('\n').find((l) => l.startsWith('{'));
  if (line === undefined) throw new Error(`the SDK child printed nothing (exit ${result.code}): ${result.stderr}`);
  return JSON.parse(line);
}

export async function sandboxToken(opts: KitOpts, sandboxID: string): Promise<string> {
  const res = await fetch(`${opts.apiUrl}/sandboxes/${sandboxID}`, { headers: { 'x-api-key': opts.apiKey } });
  return ((await res.json()) as { envdAccessToken: string }).envdAccessToken;
}

/** An MCP client to the sandbox's gateway through the kit's gateway, routed by E2B's headers. */
export async function mcpClient(opts: KitOpts, sandboxID: string, sandboxTokenValue: string, mcpToken: string): Promise<Client> {
  const client = new Client({ name: 'e2e', version: '1' });
  const headers = {
    'E2b-Sandbox-Id': sandboxID,
    'E2b-Sandbox-Port': '50005',
    'X-Access-Token': sandboxTokenValue,
    Authorization: `Bearer ${mcpToken}`,
  };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${opts.sandboxUrl}/mcp`), { requestInit: { headers } }));
  return client;
}

export interface ServerStatus {
  name: string;
  state: string;
  error?: string;
  pid?: number;
}

/** The sandbox gateway's /status through the kit's gateway: its HTTP status and body. */
export async function gatewayStatus(opts: KitOpts, sandboxID: string, mcpToken: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`${opts.sandboxUrl}/status`, {
    headers: { 'E2b-Sandbox-Id': sandboxID, 'E2b-Sandbox-Port': '50005', Authorization: `Bearer ${mcpToken}` },
  });
  return { status: res.status, body: await res.text() };
}

/** The servers of the sandbox gateway's /status (undefined while it does not answer). */
export async function serverStates(opts: KitOpts, sandboxID: string, mcpToken: string): Promise<ServerStatus[] | undefined> {
  const { status, body } = await gatewayStatus(opts, sandboxID, mcpToken).catch(() => ({ status: 0, body: '' }));
  return status === 200 ? (JSON.parse(body) as { servers: ServerStatus[] }).servers : undefined;
}
