import { startGateway, type GatewayOptions, type RunningGateway } from '../../../src/gateway';
import { MemoryCatalog } from '../../../src/catalog';
import { writeFile } from 'node:fs/promises';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { testCertificates } from '../../helpers/tls-domain';
import { call, Cleanup, closedPort, eventually, spawnGateway, startUpstream, type Upstream } from './helpers/common';

const TOKEN = 'token-of-sb1';
const cleanup = new Cleanup();
afterEach(() => cleanup.run());

async function gatewayWith(catalog: MemoryCatalog, options: Partial<GatewayOptions> = {}): Promise<RunningGateway> {
  const gateway = await startGateway({ catalog, ...options });
  cleanup.add(() => gateway.close(100));
  return gateway;
}

/** An upstream that reports what it received, so tests see what the gateway forwarded. */
async function echoUpstream(host = '127.0.0.1', name = 'agent'): Promise<Upstream> {
  const upstream = await startUpstream((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ name, method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString() }));
    });
  }, host);
  cleanup.add(() => upstream.close());
  return upstream;
}

describe('gateway routing', () => {
  it('routes by Svc-Sandbox-Id to the agent port by default and forwards method, path, body and the access token', async () => {
    const agent = await echoUpstream();
    const catalog = new MemoryCatalog([{ sandboxID: 'sb1', host: '127.0.0.1', agentPort: agent.port, token: TOKEN }]);
    const gateway = await gatewayWith(catalog);
    const reply = await call(gateway.port, {
      path: '/filesystem.Filesystem/Stat',
      headers: { 'Svc-Sandbox-Id': 'sb1', 'X-Access-Token': TOKEN, 'Content-Type': 'application/json' },
      body: '{"path":"/tmp"}',
    });
    expect(reply.status).toBe(200);
    const seen = JSON.parse(reply.body);
    expect(seen).toMatchObject({ name: 'agent', method: 'POST', url: '/filesystem.Filesystem/Stat', body: '{"path":"/tmp"}' });
    expect(seen.headers['x-access-token']).toBe(TOKEN);
    expect(seen.headers['svc-sandbox-id']).toBe('sb1');
    expect(seen.headers.via).toContain('sandbox-kit-gateway');
  });

  it('carries requests for api.{domain} to the platform API when it has one, and routes the rest as before', async () => {
    const api = await echoUpstream('127.0.0.1', 'platform-api');
    const agent = await echoUpstream('127.0.0.1', 'agent');
    const catalog = new MemoryCatalog([{ sandboxID: 'sb1', host: '127.0.0.1', agentPort: agent.port, token: TOKEN }]);
    const gateway = await gatewayWith(catalog, { domain: 'example.test', apiUpstream: { host: '127.0.0.1', port: api.port } });
    const created = await call(gateway.port, {
      path: '/sandboxes',
      headers: { Host: 'API.example.test.:443', 'X-API-Key': 'e2b_00', 'Content-Type': 'application/json' },
      body: '{"templateID":"base"}',
    });
    expect(JSON.parse(created.body)).toMatchObject({
      name: 'platform-api',
      method: 'POST',
      url: '/sandboxes',
      body: '{"templateID":"base"}',
    });
    expect(JSON.parse(created.body).headers['x-api-key']).toBe('e2b_00');
    const sandbox = await call(gateway.port, { headers: { Host: `${agent.port}-sb1.example.test`, 'X-Access-Token': TOKEN } });
    expect(JSON.parse(sandbox.body).name).toBe('agent');
    // Without an API upstream, api.{domain} is no sandbox: the usual 400.
    const plain = await gatewayWith(catalog, { domain: 'example.test' });
    expect((await call(plain.port, { headers: { Host: 'api.example.test' } })).status).toBe(400);
  });

  it("carries api.{domain} to an HTTPS platform API (a fleet's gateways: the load balancer's TLS listener), trusting only a valid certificate for its name", async () => {
    const certs = await testCertificates('example.test');
    cleanup.add(() => certs.close());
    const seen: { host?: string; servername?: string | false | null; body: string }[] = [];
    const api = createHttpsServer({ key: certs.key, cert: certs.cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({
          host: req.headers.host,
          servername: (req.socket as import('node:tls').TLSSocket).servername,
          body: Buffer.concat(chunks).toString(),
        });
        res.end(JSON.stringify({ answeredBy: 'platform-api' }));
      });
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    cleanup.add(() => new Promise<void>((resolve) => api.close(() => resolve())));
    const catalogFile = join(certs.dir, 'catalog.json');
    await writeFile(catalogFile, '[]');
    const args = [
      '--catalog',
      `file:${catalogFile}`,
      '--domain',
      'example.test',
      '--api-upstream',
      `https://api.example.test:${(api.address() as AddressInfo).port}`,
    ];
    const request = { path: '/sandboxes', headers: { Host: 'api.example.test', 'X-API-Key': 'e2b_00' }, body: '{"templateID":"base"}' };

    // The gateway's host resolves the name (to this machine) and trusts the CA that signed the API's certificate.
    const trusting = await spawnGateway(args, certs.clientEnv);
    cleanup.add(() => trusting.stop());
    const reply = await call(trusting.port, request);
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toEqual({ answeredBy: 'platform-api' });
    expect(seen).toEqual([{ host: 'api.example.test', servername: 'api.example.test', body: '{"templateID":"base"}' }]);

    // The same name, but the certificate's CA is not trusted there: refused before a byte of the request is sent.
    const { NODE_EXTRA_CA_CERTS: _trusted, ...withoutCa } = certs.clientEnv;
    const untrusting = await spawnGateway(args, withoutCa);
    cleanup.add(() => untrusting.stop());
    const refused = await call(untrusting.port, request);
    expect(refused.status).toBe(502);
    expect(JSON.parse(refused.body).message).toMatch(/connection failed: [A-Z_]*(CERT|VERIFY)/);
    expect(seen).toHaveLength(1);
  });

  it('refuses an --api-upstream that is neither HOST:PORT nor an http(s) URL, saying what it accepts', async () => {
    for (const bad of ['ftp://api.example.test', 'https://api.example.test/v1', 'api.example.test']) {
      await expect(spawnGateway(['--catalog', 'memory', '--api-upstream', bad])).rejects.toThrow(
        'expected the platform API as HOST:PORT (such as 127.0.0.1:3001) or https://HOST[:PORT]',
      );
    }
  });

  it('routes Svc-Sandbox-Port to another port of the same sandbox host', async () => {
    const agent = await echoUpstream('127.0.0.1', 'agent');
    const tool = await echoUpstream('127.0.0.1', 'tool');
    const catalog = new MemoryCatalog([{ sandboxID: 'sb1', host: '127.0.0.1', agentPort: agent.port, token: TOKEN }]);
    const gateway = await gatewayWith(catalog);
    const reply = await call(gateway.port, {
      headers: { 'Svc-Sandbox-Id': 'sb1', 'Svc-Sandbox-Port': String(tool.port), 'X-Access-Token': TOKEN },
    });
    expect(JSON.parse(reply.body).name).toBe('tool');
  });

  it('sends requests without a port header to 49983 when the entry names no agent port', async () => {
    // 127.0.0.3 keeps this well-known port apart from anything else on the machine.
    const agent = await echoUpstream('127.0.0.3', 'default-port-agent');
    expect(agent.port).not.toBe(49983);
    const standard = await startUpstream((_req, res) => res.end('on 49983'), '127.0.0.3', 49983);
    cleanup.add(() => standard.close());
    const catalog = new MemoryCatalog([{ sandboxID: 'sb1', host: '127.0.0.3', token: TOKEN }]);
    const gateway = await gatewayWith(catalog);
    const reply = await call(gateway.port, { headers: { 'Svc-Sandbox-Id': 'sb1', 'X-Access-Token': TOKEN } });
    expect(reply.body).toBe('on 49983');
  });

  it('routes the host form {port}-{sandboxID}.{domain}', async () => {
    const tool = await echoUpstream('127.0.0.1', 'tool');
    const catalog = new MemoryCatalog([{ sandboxID: 'sb1', host: '127.0.0.1', agentPort: 1, token: TOKEN }]);
    const gateway = await gatewayWith(catalog, { domain: 'sandbox.test' });
    const reply = await call(gateway.port, { headers: { Host: `${tool.port}-sb1.sandbox.test`, 'X-Access-Token': TOKEN } });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body).name).toBe('tool');
  });

  it('speaks the brand it is given (E2b) and ignores other brands', async () => {
    const agent = await echoUpstream();
    const catalog = new MemoryCatalog([{ sandboxID: 'sb1', host: '127.0.0.1', agentPort: agent.port, token: TOKEN }]);
    const gateway = await gatewayWith(catalog, { brand: 'E2b' });
    expect((await call(gateway.port, { headers: { 'E2b-Sandbox-Id': 'sb1', 'X-Access-Token': TOKEN } })).status).toBe(200);
    const other = await call(gateway.port, { headers: { 'Svc-Sandbox-Id': 'sb1', 'X-Access-Token': TOKEN } });
    expect(other.status).toBe(400);
    expect(JSON.parse(other.body).message).toContain('E2b-Sandbox-Id');
  });

  it('answers to the E2B SDK headers E2b-Sandbox-Id / E2b-Sandbox-Port with the default brand', async () => {
    const agent = await echoUpstream('127.0.0.1', 'agent');
    const tool = await echoUpstream('127.0.0.1', 'tool');
    const catalog = new MemoryCatalog([{ sandboxID: 'sb1', host: '127.0.0.1', agentPort: agent.port, token: TOKEN }]);
    const gateway = await gatewayWith(catalog);
    const toAgent = await call(gateway.port, { headers: { 'E2b-Sandbox-Id': 'sb1', 'X-Access-Token': TOKEN } });
    expect(toAgent.status).toBe(200);
    expect(JSON.parse(toAgent.body).name).toBe('agent');
    const toTool = await call(gateway.port, {
      headers: { 'E2b-Sandbox-Id': 'sb1', 'E2b-Sandbox-Port': String(tool.port), 'X-Access-Token': TOKEN },
    });
    expect(JSON.parse(toTool.body).name).toBe('tool');
    const conflicting = await call(gateway.port, {
      headers: { 'E2b-Sandbox-Id': 'sb1', 'Svc-Sandbox-Id': 'sb2', 'X-Access-Token': TOKEN },
    });
    expect(conflicting.status).toBe(400);
    expect(JSON.parse(conflicting.body).message).toContain('name different sandboxes');
  });

  it('answers 400 JSON naming the header when Svc-Sandbox-Id is missing, and for a bad port', async () => {
    const gateway = await gatewayWith(new MemoryCatalog());
    const missing = await call(gateway.port, { headers: { 'X-Access-Token': TOKEN } });
    expect(missing.status).toBe(400);
    expect(missing.headers['content-type']).toBe('application/json');
    expect(JSON.parse(missing.body)).toEqual({ message: expect.stringContaining('Svc-Sandbox-Id or E2b-Sandbox-Id'), code: 400 });
    const badPort = await call(gateway.port, { headers: { 'Svc-Sandbox-Id': 'sb1', 'Svc-Sandbox-Port': '70000' } });
    expect(badPort.status).toBe(400);
    expect(JSON.parse(badPort.body).message).toContain('Svc-Sandbox-Port');
  });
});

describe('gateway errors', () => {
  it('answers an unknown sandbox with 502 and exactly sandboxID, message, code', async () => {
    const gateway = await gatewayWith(new MemoryCatalog());
    const reply = await call(gateway.port, { headers: { 'Svc-Sandbox-Id': 'ghost', 'X-Access-Token': TOKEN } });
    expect(reply.status).toBe(502);
    expect(reply.headers['content-type']).toBe('application/json');
    const body = JSON.parse(reply.body);
    expect(Object.keys(body).sort()).toEqual(['code', 'message', 'sandboxID']);
    expect(body).toEqual({ sandboxID: 'ghost', message: expect.stringContaining('not found'), code: 502 });
  });

  it('answers a paused sandbox with 502 saying it is paused, without contacting it', async () => {
    const agent = await echoUpstream();
    const catalog = new MemoryCatalog([{ sandboxID: 'sb1', host: '127.0.0.1', agentPort: agent.port, token: TOKEN, state: 'paused' }]);
    const gateway = await gatewayWith(catalog);
    const reply = await call(gateway.port, { headers: { 'Svc-Sandbox-Id': 'sb1', 'X-Access-Token': TOKEN } });
    expect(reply.status).toBe(502);
    expect(JSON.parse(reply.body)).toEqual({ sandboxID: 'sb1', message: expect.stringContaining('paused'), code: 502 });
    expect(agent.connections).toBe(0);
    await catalog.setState('sb1', 'running');
    expect((await call(gateway.port, { headers: { 'Svc-Sandbox-Id': 'sb1', 'X-Access-Token': TOKEN } })).status).toBe(200);
  });

  it('answers a port nobody listens on with 502 JSON naming sandbox and port', async () => {
    const port = await closedPort();
    const catalog = new MemoryCatalog([{ sandboxID: 'sb1', host: '127.0.0.1', agentPort: port, token: TOKEN }]);
    const gateway = await gatewayWith(catalog);
    const reply = await call(gateway.port, { headers: { 'Svc-Sandbox-Id': 'sb1', 'X-Access-Token': TOKEN } });
    expect(reply.status).toBe(502);
    expect(JSON.parse(reply.body)).toEqual({ sandboxID: 'sb1', message: expect.stringContaining('refused'), port, code: 502 });
  });

  it('answers 504 JSON when the upstream is slower than Connect-Timeout-Ms, and stops waiting for it', async () => {
    let closedByGateway = false;
    const slow = await startUpstream((_req, res) => {
      res.on('close', () => (closedByGateway = !res.writableFinished));
      setTimeout(() => res.end('late'), 30_000).unref();
    });
    cleanup.add(() => slow.close());
    const catalog = new MemoryCatalog([{ sandboxID: 'sb1', host: '127.0.0.1', agentPort: slow.port, token: TOKEN }]);
    const gateway = await gatewayWith(catalog);
    const reply = await call(gateway.port, { headers: { 'Svc-Sandbox-Id': 'sb1', 'X-Access-Token': TOKEN, 'Connect-Timeout-Ms': '200' } });
    expect(reply.status).toBe(504);
    expect(JSON.parse(reply.body)).toEqual({ sandboxID: 'sb1', message: expect.stringContaining('200 ms'), port: slow.port, code: 504 });
    await eventually(async () => expect(closedByGateway).toBe(true));
  });

  it('answers 504 JSON when the upstream exceeds the gateway upstream timeout', async () => {
    const slow = await startUpstream(() => {});
    cleanup.add(() => slow.close());
    const catalog = new MemoryCatalog([{ sandboxID: 'sb1', host: '127.0.0.1', agentPort: slow.port, token: TOKEN }]);
    const gateway = await gatewayWith(catalog, { limits: { upstreamTimeoutMs: 150 } });
    const reply = await call(gateway.port, { headers: { 'Svc-Sandbox-Id': 'sb1', 'X-Access-Token': TOKEN } });
    expect(reply.status).toBe(504);
    expect(JSON.parse(reply.body).code).toBe(504);
  });
});

describe('gateway access', () => {
  it('answers 401 JSON for a missing or wrong token on the agent port, and the agent never sees the request', async () => {
    const agent = await echoUpstream('127.0.0.1', 'agent');
    const catalog = new MemoryCatalog([{ sandboxID: 'sb1', host: '127.0.0.1', agentPort: agent.port, token: TOKEN }]);
    const gateway = await gatewayWith(catalog);
    const missing = await call(gateway.port, { headers: { 'Svc-Sandbox-Id': 'sb1', 'Svc-Sandbox-Port': String(agent.port) } });
    expect(missing.status).toBe(401);
    expect(JSON.parse(missing.body)).toEqual({ sandboxID: 'sb1', message: expect.stringContaining('X-Access-Token'), code: 401 });
    const wrong = await call(gateway.port, {
      headers: { 'Svc-Sandbox-Id': 'sb1', 'Svc-Sandbox-Port': String(agent.port), 'X-Access-Token': 'guess' },
    });
    expect(wrong.status).toBe(401);
    expect(JSON.parse(wrong.body).message).toContain('does not match');
    expect(agent.connections).toBe(0);
    const allowed = await call(gateway.port, { headers: { 'Svc-Sandbox-Id': 'sb1', 'X-Access-Token': TOKEN } });
    expect(JSON.parse(allowed.body).name).toBe('agent');
  });

  it('checks the token before revealing that a sandbox is paused or resuming it', async () => {
    let resumes = 0;
    const catalog = new MemoryCatalog([{ sandboxID: 'sb1', host: '127.0.0.1', token: TOKEN, state: 'paused', autoResume: true }]);
    const gateway = await gatewayWith(catalog, { resumeSandbox: async () => void resumes++ });
    const reply = await call(gateway.port, { headers: { 'Svc-Sandbox-Id': 'sb1', 'X-Access-Token': 'guess' } });
    expect(reply.status).toBe(401);
    expect(resumes).toBe(0);
  });

  it('never connects anywhere but the sandbox own address, whatever the headers say', async () => {
    // The sandbox lives on 127.0.0.2; a private service listens on 127.0.0.1 only.
    const sandboxAgent = await echoUpstream('127.0.0.2', 'agent');
    const privateService = await echoUpstream('127.0.0.1', 'private');
    const catalog = new MemoryCatalog([{ sandboxID: 'sb1', host: '127.0.0.2', agentPort: sandboxAgent.port, token: TOKEN }]);
    const gateway = await gatewayWith(catalog, { domain: 'sandbox.test' });
    const attempts: { path: string; headers: Record<string, string> }[] = [
      { path: '/', headers: { 'Svc-Sandbox-Port': String(privateService.port) } },
      { path: '/', headers: { 'Svc-Sandbox-Port': String(privateService.port), Host: `127.0.0.1:${privateService.port}` } },
      {
        path: '/',
        headers: {
          'Svc-Sandbox-Port': String(privateService.port),
          'X-Forwarded-Host': `127.0.0.1:${privateService.port}`,
          Forwarded: `host=127.0.0.1:${privateService.port}`,
        },
      },
      { path: `http://127.0.0.1:${privateService.port}/`, headers: {} },
      { path: '/', headers: { 'Svc-Sandbox-Id': `sb1.127.0.0.1` } },
    ];
    for (const attempt of attempts) {
      const reply = await call(gateway.port, {
        path: attempt.path,
        headers: { 'Svc-Sandbox-Id': 'sb1', 'X-Access-Token': TOKEN, ...attempt.headers },
      });
      expect([400, 502]).toContain(reply.status);
    }
    expect(privateService.connections).toBe(0);
    const good = await call(gateway.port, { headers: { 'Svc-Sandbox-Id': 'sb1', 'X-Access-Token': TOKEN } });
    expect(JSON.parse(good.body).name).toBe('agent');
  });
});

describe('auto-resume', () => {
  it('resumes a paused sandbox that allows it, once for concurrent requests, then serves them', async () => {
    const agentPort = await closedPort();
    const catalog = new MemoryCatalog([
      { sandboxID: 'sb1', host: '127.0.0.1', agentPort, token: TOKEN, state: 'paused', autoResume: true },
    ]);
    let resumes = 0;
    const gateway = await gatewayWith(catalog, {
      resumeSandbox: async (id) => {
        resumes++;
        // Resuming brings the sandbox's agent back, then the platform marks it running.
        const agent = await startUpstream((_req, res) => res.end('resumed'), '127.0.0.1', agentPort);
        cleanup.add(() => agent.close());
        await catalog.setState(id, 'running');
      },
    });
    const replies = await Promise.all(
      [1, 2, 3].map(() => call(gateway.port, { headers: { 'Svc-Sandbox-Id': 'sb1', 'X-Access-Token': TOKEN } })),
    );
    expect(replies.map((r) => `${r.status} ${r.body}`)).toEqual(['200 resumed', '200 resumed', '200 resumed']);
    expect(resumes).toBe(1);
  });

  it('answers 502 saying why when resuming fails, or when no resumer is configured', async () => {
    const catalog = new MemoryCatalog([{ sandboxID: 'sb1', host: '127.0.0.1', token: TOKEN, state: 'paused', autoResume: true }]);
    const failing = await gatewayWith(catalog, { resumeSandbox: async () => Promise.reject(new Error('no capacity')) });
    const failed = await call(failing.port, { headers: { 'Svc-Sandbox-Id': 'sb1', 'X-Access-Token': TOKEN } });
    expect(failed.status).toBe(502);
    expect(JSON.parse(failed.body)).toEqual({ sandboxID: 'sb1', message: expect.stringContaining('no capacity'), code: 502 });
    const without = await gatewayWith(catalog);
    const refused = await call(without.port, { headers: { 'Svc-Sandbox-Id': 'sb1', 'X-Access-Token': TOKEN } });
    expect(refused.status).toBe(502);
    expect(JSON.parse(refused.body).message).toContain('paused');
  });
});
