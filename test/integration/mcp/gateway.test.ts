import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { builtinCatalog } from '../../../src/mcp/catalog/load';
import { parseMcpConfig } from '../../../src/mcp/config/validate';
import { type RunningGateway, startMcpGateway } from '../../../src/mcp/gateway/server';
import { connect, ECHO_RUN_CMD, REPO, tempDir, text, waitFor } from './helpers/common';

describe('mcp-gateway: reference servers and custom ones behind one Streamable HTTP endpoint', () => {
  const token = `tok-${Math.random().toString(36).slice(2)}`;
  const root = tempDir('sk-mcp-gw');
  const allowed = path.join(root, 'allowed');
  const outside = path.join(root, 'outside');
  const logs: string[] = [];
  let gateway: RunningGateway;
  let client: Client;
  let url: string;

  beforeAll(async () => {
    fs.mkdirSync(allowed);
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(allowed, 'hello.txt'), 'hello from inside\n');
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'must not be read\n');
    const config = parseMcpConfig({
      filesystem: { paths: [allowed] },
      memory: { memoryFilePath: path.join(root, 'memory.jsonl') },
      custom: {
        echo: { runCmd: ECHO_RUN_CMD, envs: { ECHO_GREETING: 'hi' } },
        broken: { runCmd: 'echo "broken-server: cannot find its config" >&2; exit 7' },
      },
    });
    gateway = await startMcpGateway({
      config,
      catalog: builtinCatalog(),
      token,
      port: 0,
      host: '127.0.0.1',
      serversDirs: [REPO],
      stateDir: path.join(root, 'state'),
      log: (line) => logs.push(line),
    });
    url = `http://127.0.0.1:${gateway.port}/mcp`;
    await gateway.settled;
    client = await connect(url, token);
  });

  afterAll(async () => {
    await client?.close();
    await gateway?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  test('lists the tools of every running server, namespaced by server name', async () => {
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'filesystem__read_text_file',
        'filesystem__list_directory',
        'memory__create_entities',
        'memory__read_graph',
        'echo__echo',
      ]),
    );
    expect(names.every((n) => /^(filesystem|memory|echo)__/.test(n))).toBe(true);
  });

  test('calls a tool of each server', async () => {
    const read = await client.callTool({ name: 'filesystem__read_text_file', arguments: { path: path.join(allowed, 'hello.txt') } });
    expect(read.isError).toBeFalsy();
    expect(text(read)).toContain('hello from inside');

    await client.callTool({
      name: 'memory__create_entities',
      arguments: { entities: [{ name: 'sandbox-kit', entityType: 'project', observations: ['runs MCP servers'] }] },
    });
    const graph = await client.callTool({ name: 'memory__read_graph', arguments: {} });
    expect(text(graph)).toContain('runs MCP servers');

    const echo = await client.callTool({ name: 'echo__echo', arguments: { text: 'round trip' } });
    expect(text(echo)).toBe('echo: round trip');
  });

  test('custom envs reach the custom server; the gateway token does not', async () => {
    const report = JSON.parse(text(await client.callTool({ name: 'echo__whoami', arguments: {} })));
    expect(report.greeting).toBe('hi');
    expect(report.gatewayToken).toBeNull();
  });

  test('the filesystem server refuses a path outside paths', async () => {
    const result = await client.callTool({ name: 'filesystem__read_text_file', arguments: { path: path.join(outside, 'secret.txt') } });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/access denied/i);
    expect(text(result)).not.toContain('must not be read');
  });

  test('a wrong or missing token gets 401; /health needs none', async () => {
    await expect(connect(url, 'wrong-token')).rejects.toMatchObject({ code: 401 });
    const bare = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toBe('Bearer');
    expect((await fetch(`http://127.0.0.1:${gateway.port}/health`)).status).toBe(200);
  });

  test('a server that fails to start is reported with its stderr, and the others still work', async () => {
    const res = await fetch(`http://127.0.0.1:${gateway.port}/status`, { headers: { Authorization: `Bearer ${token}` } });
    const status = (await res.json()) as { ready: boolean; servers: { name: string; state: string; stderr?: string; error?: string }[] };
    expect(status.ready).toBe(true);
    const broken = status.servers.find((s) => s.name === 'broken');
    expect(broken?.state).toBe('failed');
    expect(broken?.stderr).toContain('broken-server: cannot find its config');
    expect(
      status.servers
        .filter((s) => s.state === 'ready')
        .map((s) => s.name)
        .sort(),
    ).toEqual(['echo', 'filesystem', 'memory']);
    expect(logs.join('\n')).toContain('broken-server: cannot find its config');
  });

  test('a call to an unknown tool names the tool and the servers', async () => {
    const result = await client.callTool({ name: 'nosuch__tool', arguments: {} });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('nosuch__tool');
    expect(text(result)).toContain('filesystem');
  });

  test('a server that crashes later is restarted, and its tools work again', async () => {
    const before = JSON.parse(text(await client.callTool({ name: 'echo__whoami', arguments: {} }))).pid;
    await client.callTool({ name: 'echo__crash', arguments: {} });
    const after = await waitFor('the echo server to come back', async () => {
      const s = gateway.status().servers.find((x) => x.name === 'echo');
      return s?.state === 'ready' && s.restarts === 1 ? s : undefined;
    });
    expect(after.pid).not.toBe(before);
    expect(text(await client.callTool({ name: 'echo__echo', arguments: { text: 'again' } }))).toBe('echo: again');
    expect(logs.join('\n')).toContain('crashing on request');
  });
});

describe('mcp-gateway: a server that keeps crashing', () => {
  test('past its restart limit it stays failed, and every call of its tools says why, with its stderr', async () => {
    const root = tempDir('sk-mcp-gw-crash');
    const logs: string[] = [];
    const gateway = await startMcpGateway({
      config: parseMcpConfig({ custom: { echo: { runCmd: ECHO_RUN_CMD } } }),
      catalog: builtinCatalog(),
      token: 't',
      port: 0,
      host: '127.0.0.1',
      serversDirs: [REPO],
      stateDir: path.join(root, 'state'),
      maxRestarts: 0,
      log: (line) => logs.push(line),
    });
    const client = await connect(`http://127.0.0.1:${gateway.port}/mcp`, 't');
    try {
      await gateway.settled;
      await client.callTool({ name: 'echo__crash', arguments: {} });
      await waitFor('the echo server to be reported failed', () => (gateway.status().servers[0].state === 'failed' ? true : undefined));
      // Its tools stay listed, so the failure is visible where the client looks.
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('echo__echo');
      const result = await client.callTool({ name: 'echo__echo', arguments: { text: 'anyone?' } });
      expect(result.isError).toBe(true);
      expect(text(result)).toContain('server echo is failed');
      expect(text(result)).toContain('crashing on request');
      expect(logs.join('\n')).toContain('not restarted again');
    } finally {
      await client.close();
      await gateway.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
