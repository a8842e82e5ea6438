import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { LaunchPlan } from '../launch/plan';
import { Tail } from './tail';
import { sleep } from '../../util/poll';

export type UpstreamState = 'pulling' | 'starting' | 'ready' | 'restarting' | 'failed' | 'stopped';

export interface UpstreamStatus {
  name: string;
  state: UpstreamState;
  tools: number;
  pid: number | null;
  restarts: number;
  /** Why the server is not ready (failed, or the crash being recovered from). */
  error?: string;
  /** The last lines the server wrote to stderr, when it failed or crashed. */
  stderr?: string;
}

export interface UpstreamOptions {
  startTimeoutMs: number;
  callTimeoutMs: number;
  /** Restarts allowed within `restartWindowMs` before the server is reported failed for good. */
  maxRestarts: number;
  restartWindowMs: number;
  log(line: string): void;
  /** Called when the tool list may have changed (a restart came up, a server failed). */
  onChange(): void;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function runInstall(plan: LaunchPlan, env: Record<string, string>, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const tail = new Tail();
    const child = spawn('/bin/sh', ['-c', plan.installCmd ?? 'true'], { cwd: plan.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (c) => tail.push(c));
    child.stderr.on('data', (c) => tail.push(c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (err) => reject(new Error(`installCmd could not run: ${err.message}`)));
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(Object.assign(new Error(`installCmd exited with ${signal ?? code}`), { stderr: tail.toString() }));
    });
  });
}

/**
 * One configured server behind the gateway: its process (stdio), its MCP client and its tools. A server that fails
 * to start or crashes is restarted a bounded number of times, then stays `failed` with its error and stderr, which
 * the gateway reports; it is never silently dropped.
 */
export class Upstream {
  state: UpstreamState = 'starting';
  tools: Tool[] = [];
  private client?: Client;
  private transport?: Transport & { pid?: number | null };
  private error?: string;
  private readonly stderr = new Tail();
  private restartTimes: number[] = [];
  private restarts = 0;
  private ready: Promise<void> = Promise.resolve();
  private stopping = false;

  constructor(
    readonly plan: LaunchPlan,
    private readonly options: UpstreamOptions,
  ) {}

  /** Starts the server; resolves once it is ready or has failed (never rejects). */
  start(): Promise<void> {
    this.ready = this.launch();
    return this.ready;
  }

  private env(): Record<string, string> {
    return { ...getDefaultEnvironment(), ...this.plan.env };
  }

  private async launch(): Promise<void> {
    const { plan } = this;
    this.stderr.clear();
    try {
      fs.mkdirSync(plan.cwd, { recursive: true, mode: 0o700 });
      for (const file of plan.files) fs.writeFileSync(file.path, file.content, { mode: 0o600 });
      if (plan.installCmd !== undefined && this.restarts === 0) await runInstall(plan, this.env(), this.options.startTimeoutMs);
      const transport = this.transportFor(plan);
      const client = new Client({ name: 'mcp-gateway', version: '1' });
      this.transport = transport;
      this.client = client;
      await client.connect(transport, { timeout: this.options.startTimeoutMs });
      const tools: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: this.options.startTimeoutMs });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      this.tools = tools;
      // Crashes from now on are noticed here; a close during connect is the failure handled below.
      client.onclose = () => this.crashed();
      this.state = 'ready';
      this.error = undefined;
      this.options.log(
        `${plan.name}: ready, ${tools.length} tools (${plan.remote ? `remote ${new URL(plan.remote.url).host}` : `pid ${transport.pid}`})`,
      );
    } catch (err) {
      // The server may still be writing why it died: give its stderr a moment to arrive.
      await sleep(100);
      const extra = (err as { stderr?: string }).stderr;
      if (extra) this.stderr.push(extra);
      await this.kill();
      this.state = 'failed';
      this.error = `failed to start: ${errorText(err)}`;
      this.options.log(`${plan.name}: ${this.error}${this.stderrNote()}`);
    }
    this.options.onChange();
  }

  /** A process on stdio, or a vendor's HTTP endpoint (its headers hold the configured secrets; never logged). */
  private transportFor(plan: LaunchPlan): Transport & { pid?: number | null } {
    if (plan.remote !== undefined) {
      const url = new URL(plan.remote.url);
      const requestInit = { headers: plan.remote.headers };
      return plan.remote.transport === 'sse'
        ? new SSEClientTransport(url, {
            requestInit,
            eventSourceInit: {
              fetch: (u, init) => fetch(u, { ...init, headers: { ...plan.remote?.headers, ...(init?.headers as Record<string, string>) } }),
            },
          })
        : new StreamableHTTPClientTransport(url, { requestInit });
    }
    const transport = new StdioClientTransport({ command: plan.command, args: plan.args, env: this.env(), cwd: plan.cwd, stderr: 'pipe' });
    transport.stderr?.on('data', (chunk: Buffer) => this.stderr.push(chunk));
    return transport;
  }

  private stderrNote(): string {
    const text = this.stderr.toString().trim();
    return text ? `; stderr:\n${text}` : '';
  }

  private crashed(): void {
    if (this.stopping || this.state !== 'ready') return;
    const now = Date.now();
    this.restartTimes = this.restartTimes.filter((t) => now - t < this.options.restartWindowMs);
    const detail = this.stderr.toString().trim();
    if (this.restartTimes.length >= this.options.maxRestarts) {
      this.state = 'failed';
      this.error = `exited ${this.restartTimes.length + 1} times within ${this.options.restartWindowMs} ms; not restarted again`;
      this.options.log(`${this.plan.name}: ${this.error}${this.stderrNote()}`);
      this.options.onChange();
      return;
    }
    this.restartTimes.push(now);
    this.restarts++;
    this.state = 'restarting';
    this.error = `exited unexpectedly${detail ? ` (stderr: ${detail.slice(-500)})` : ''}; restarting`;
    this.options.log(`${this.plan.name}: ${this.error} (restart ${this.restarts})`);
    this.options.onChange();
    const delay = 100 * 2 ** (this.restartTimes.length - 1);
    this.ready = new Promise<void>((r) => setTimeout(r, delay)).then(() => (this.stopping ? undefined : this.launch()));
  }

  /** Calls one of this server's tools by its own name. A server that is not ready answers with an error result. */
  async call(tool: string, args: Record<string, unknown> | undefined): Promise<CallToolResult> {
    if (this.state === 'starting' || this.state === 'restarting') await this.ready;
    if (this.state !== 'ready' || this.client === undefined) {
      return {
        isError: true,
        content: [{ type: 'text', text: `server ${this.plan.name} is ${this.state}: ${this.error ?? 'not running'}${this.stderrNote()}` }],
      };
    }
    return (await this.client.callTool({ name: tool, arguments: args }, undefined, {
      timeout: this.options.callTimeoutMs,
      resetTimeoutOnProgress: true,
    })) as CallToolResult;
  }

  status(): UpstreamStatus {
    const stderr = this.state === 'ready' ? undefined : this.stderr.toString().trim() || undefined;
    return {
      name: this.plan.name,
      state: this.state,
      tools: this.tools.length,
      pid: this.transport?.pid ?? null,
      restarts: this.restarts,
      error: this.error,
      stderr,
    };
  }

  private async kill(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) client.onclose = undefined;
    await client?.close().catch(() => undefined);
    await this.transport?.close().catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.state = 'stopped';
    await this.kill();
  }
}
