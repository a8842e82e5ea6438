/**
 * Domain names in allowOut and an egress proxy, from the unmodified SDK, enforced outside the sandbox (probes run as
 * root inside): an allowed name reaches the internet stand-in by HTTPS (SNI) and HTTP (Host), a name not allowed at
 * the same address does not, an allowed name sent to another address goes nowhere; a sandbox with an egress proxy is
 * seen from the proxy's address only, and a proxy that refuses it leaves it with no way out. On a kept-alive HTTP
 * connection admitted by its first Host, a later request for another name at the same server is never passed on. Names: the sandbox picks
 * the address (curl --resolve, as its own resolver would answer), the relay checks it against the resolver stand-in.
 * Every relay test runs twice, the relay reading original destinations from procfs and then through netlink (the
 * conntrack tool, what it falls back to on kernels without /proc/net/nf_conntrack), each on its own network.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import type { Lookup } from '../../../src/runtime/network/egress-relay/original-destination';
import { RELAY_PORT } from '../../../src/runtime/network/guard-rules';
import { ensureRelay, relayDir } from '../../../src/runtime/network/relay-process';
import { ROOTFS_TIMEOUT_MS } from '../runtime/helpers/common';
import { INTERNET, SOCKS } from './helpers/internet';
import { startRig, type NetworkRig } from './helpers/rig';

jest.setTimeout(240_000);

let rig: NetworkRig;

interface Seen {
  called: string;
  from: string;
  host: string;
  sni: string | null;
}

/** curl in the sandbox: what the internet stand-in saw, or undefined when the connection went nowhere. */
async function fetchIn(sandboxID: string, url: string, resolveTo?: string, extra = ''): Promise<Seen | undefined> {
  const u = new URL(url);
  const port = u.port || (u.protocol === 'https:' ? '443' : '80');
  const resolve = resolveTo ? `--resolve ${u.hostname}:${port}:${resolveTo}` : '';
  const r = await rig.sh(sandboxID, `curl -sk --max-time 5 ${resolve} ${extra} ${url}`);
  return r.exitCode === 0 && r.stdout.startsWith('{') ? (JSON.parse(r.stdout) as Seen) : undefined;
}

/**
 * Run in the sandbox with its Node: requests on ONE kept-alive connection to `address`:80, in order (each waits for
 * the answer to the one before), or all written at once (pipelined). Prints what came back: the Host each answer
 * says the server was sent, or the error that ended the connection.
 */
const ONE_CONNECTION = `
const net = require('node:net');
const [address, mode, ...requests] = process.argv.slice(2);
const seen = [];
let buf = '';
const s = net.connect(80, address);
const answers = () => {
  const hosts = [];
  for (const m of buf.matchAll(/"host":"([^"]*)"/g)) hosts.push(m[1]);
  return hosts;
};
const finish = (how) => { console.log(JSON.stringify({ hosts: answers(), end: how })); process.exit(0); };
s.on('data', (d) => { buf += d.toString('latin1'); if (mode === 'seq' && answers().length === seen.length && requests.length) next(); });
s.on('error', (e) => finish(e.code || e.message));
s.on('close', () => finish('closed'));
setTimeout(() => finish('open'), 4000);
const next = () => { const r = requests.shift(); seen.push(r); s.write(Buffer.from(r, 'base64')); };
s.on('connect', () => { if (mode === 'seq') next(); else { for (const r of requests) s.write(Buffer.from(r, 'base64')); requests.length = 0; } });
`;

const get = (host: string) => `GET / HTTP/1.1\r\nHost: ${host}\r\n\r\n`;

async function oneConnection(sandboxID: string, mode: 'seq' | 'pipelined', requests: string[]) {
  const args = requests.map((r) => Buffer.from(r, 'latin1').toString('base64')).join(' ');
  const r = await rig.sh(
    sandboxID,
    `cat > /tmp/one-connection.js <<'EOF'\n${ONE_CONNECTION}\nEOF\n/opt/sandbox-kit/node /tmp/one-connection.js ${INTERNET.web} ${mode} ${args}`,
  );
  expect(r.exitCode).toBe(0);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { hosts: string[]; end: string };
}

describe.each<[Lookup]>([['procfs'], ['netlink']])('the egress relay reading original destinations by %s', (lookup) => {
  beforeAll(async () => {
    rig = await startRig({}, 'skn');
    // Started before any sandbox needs it, with the way forced; the network finds it running.
    await ensureRelay(rig.net.namespace, undefined, lookup);
  }, ROOTFS_TIMEOUT_MS);
  afterAll(async () => rig?.close());

  test('allowOut with domain names: allowed names by SNI and Host, others refused at the same address, no address tricks', async () => {
    const s = await rig.sdk.create('base', {
      ...rig.opts,
      network: { allowOut: ['allowed.skn.test', '*.wild.skn.test'], denyOut: ['0.0.0.0/0'] },
    });
    const id = s.sandboxId;
    const https = await fetchIn(id, 'https://allowed.skn.test/', INTERNET.web);
    expect(https).toMatchObject({ called: INTERNET.web, sni: 'allowed.skn.test' });
    expect(await fetchIn(id, 'http://allowed.skn.test/', INTERNET.web)).toMatchObject({ called: INTERNET.web, host: 'allowed.skn.test' });
    expect(await fetchIn(id, 'https://a.wild.skn.test/', INTERNET.web)).toMatchObject({ sni: 'a.wild.skn.test' });

    // Not allowed, though at the very address the allowed name has; a wildcard does not cover its apex.
    expect(await fetchIn(id, 'https://other.skn.test/', INTERNET.web)).toBeUndefined();
    expect(await fetchIn(id, 'http://other.skn.test/', INTERNET.web)).toBeUndefined();
    expect(await fetchIn(id, 'https://wild.skn.test/', INTERNET.web)).toBeUndefined();
    expect(await fetchIn(id, `http://${INTERNET.web}/`)).toBeUndefined();
    // An allowed name sent to an address that is not its own goes nowhere (SNI and Host alike).
    expect(await fetchIn(id, 'https://allowed.skn.test/', INTERNET.web2)).toBeUndefined();
    expect(await fetchIn(id, `http://${INTERNET.web2}/`, undefined, "-H 'Host: allowed.skn.test'")).toBeUndefined();
    // Nor into private space, whatever the name.
    expect(await fetchIn(id, 'http://allowed.skn.test/', INTERNET.metadata)).toBeUndefined();
    expect(await fetchIn(id, 'http://meta.skn.test/', INTERNET.metadata)).toBeUndefined();
    // The relay itself is no door: dialled directly, it is the bridge namespace, which takes nothing from sandboxes.
    expect(await fetchIn(id, `http://${rig.net.gateway}:${RELAY_PORT}/`, undefined, "-H 'Host: allowed.skn.test'")).toBeUndefined();

    const info = await rig.sdk.call<{ network: { allowOut: string[] } }>(id, 'getInfo');
    expect(info.network.allowOut).toEqual(['allowed.skn.test', '*.wild.skn.test']);

    // The rules outlive a pause and a platform restart.
    expect(await rig.sdk.call(id, 'pause')).toBe(true);
    await rig.sdk.connect(id, rig.opts);
    await rig.restart();
    await rig.sdk.connect(id, rig.opts);
    expect(await fetchIn(id, 'https://allowed.skn.test/', INTERNET.web)).toMatchObject({ sni: 'allowed.skn.test' });
    expect(await fetchIn(id, 'https://other.skn.test/', INTERNET.web)).toBeUndefined();

    // Cleared by an update that leaves them out.
    await rig.sdk.call(id, 'updateNetwork', {});
    expect(await fetchIn(id, 'https://other.skn.test/', INTERNET.web)).toMatchObject({ sni: 'other.skn.test' });
    await rig.sdk.call(id, 'kill');
  });

  test('a kept-alive HTTP connection admitted by its Host: every later request must name an allowed host, or it is closed', async () => {
    const s = await rig.sdk.create('base', {
      ...rig.opts,
      network: { allowOut: ['allowed.skn.test', '*.wild.skn.test'], denyOut: ['0.0.0.0/0'] },
    });
    const id = s.sandboxId;
    // Hostile: the same server hosts other.skn.test; a second request for it on the allowed connection never reaches it.
    const sequential = await oneConnection(id, 'seq', [get('allowed.skn.test'), get('other.skn.test'), get('allowed.skn.test')]);
    // Whole, so that a failure shows how the connection ended.
    expect(sequential).toMatchObject({ hosts: ['allowed.skn.test'] });
    expect(sequential.end).not.toBe('open');
    const pipelined = await oneConnection(id, 'pipelined', [get('allowed.skn.test'), get('other.skn.test')]);
    expect(pipelined.hosts).not.toContain('other.skn.test');
    expect(pipelined.end).not.toBe('open');
    // A bare LF, which a lenient server reads as a line end: the relay cannot follow it and passes none of it.
    const bareLf = await oneConnection(id, 'seq', [
      get('allowed.skn.test'),
      'GET / HTTP/1.1\nHost: other.skn.test\n\r\nHost: allowed.skn.test\r\n\r\n',
    ]);
    expect(bareLf.hosts).toEqual(['allowed.skn.test']);
    // The URL of a request names the host over its Host header.
    const absolute = await oneConnection(id, 'seq', [
      get('allowed.skn.test'),
      'GET http://other.skn.test/ HTTP/1.1\r\nHost: allowed.skn.test\r\n\r\n',
    ]);
    expect(absolute.hosts).toEqual(['allowed.skn.test']);

    // Legitimate: allowed names one after another on one connection, a body that merely contains a request for another
    // name, and pipelining, all answered, the connection kept open.
    const hidden = get('other.skn.test');
    const post = `POST /form HTTP/1.1\r\nHost: a.wild.skn.test\r\nContent-Length: ${hidden.length}\r\n\r\n${hidden}`;
    const legit = await oneConnection(id, 'seq', [get('allowed.skn.test'), post, get('allowed.skn.test')]);
    expect(legit).toEqual({ hosts: ['allowed.skn.test', 'a.wild.skn.test', 'allowed.skn.test'], end: 'open' });
    const legitPipelined = await oneConnection(id, 'pipelined', [get('allowed.skn.test'), get('b.wild.skn.test')]);
    expect(legitPipelined).toEqual({ hosts: ['allowed.skn.test', 'b.wild.skn.test'], end: 'open' });
    await rig.sdk.call(id, 'kill');
  });

  test("egressProxy: the sandbox's TCP leaves only through the named SOCKS5 proxy; a proxy that refuses leaves no way out", async () => {
    const proxy = { address: `${SOCKS.address}:${SOCKS.port}`, username: SOCKS.username, password: SOCKS.password };
    const direct = await rig.sdk.create('base', rig.opts);
    const proxied = await rig.sdk.create('base', {
      ...rig.opts,
      network: { egressProxy: proxy, allowOut: ['allowed.skn.test'], denyOut: [`${INTERNET.web}/32`] },
    });
    const directSeen = await fetchIn(direct.sandboxId, `http://${INTERNET.web2}/`);
    expect(directSeen?.from).not.toBe(SOCKS.address);
    // Anything not denied, by address, and a denied address by an allowed name (the proxy resolves it): from the proxy.
    expect(await fetchIn(proxied.sandboxId, `http://${INTERNET.web2}/`)).toMatchObject({ from: SOCKS.address, called: INTERNET.web2 });
    expect(await fetchIn(proxied.sandboxId, 'https://allowed.skn.test/', INTERNET.web)).toMatchObject({
      from: SOCKS.address,
      sni: 'allowed.skn.test',
    });
    expect(await fetchIn(proxied.sandboxId, `http://${INTERNET.web}/`)).toBeUndefined();
    const info = await rig.sdk.call<{ network: { egressProxy?: { address: string; username?: string; password?: string } } }>(
      proxied.sandboxId,
      'getInfo',
    );
    expect(info.network.egressProxy).toEqual({ address: proxy.address, username: SOCKS.username });

    // A wrong password: the proxy refuses, and nothing goes out directly instead.
    await rig.sdk.call(proxied.sandboxId, 'updateNetwork', { egressProxy: { ...proxy, password: 'wrong' } });
    expect(await fetchIn(proxied.sandboxId, `http://${INTERNET.web2}/`)).toBeUndefined();
    // The update replaces everything: without the proxy the sandbox goes out directly again.
    await rig.sdk.call(proxied.sandboxId, 'updateNetwork', {});
    expect((await fetchIn(proxied.sandboxId, `http://${INTERNET.web2}/`))?.from).not.toBe(SOCKS.address);
    for (const s of [direct, proxied]) await rig.sdk.call(s.sandboxId, 'kill');
  });

  test(`the relay read every original destination by ${lookup}`, () => {
    const log = fs.readFileSync(join(relayDir(rig.net.namespace), 'relay.log'), 'utf8');
    expect(log).toContain(`original destinations from ${lookup}`);
    expect(log).not.toContain(`original destinations from ${lookup === 'procfs' ? 'netlink' : 'procfs'}`);
    expect(log).not.toContain('cannot read original destinations');
  });

  if (lookup === 'procfs') {
    test('bad domain rules and proxies get 400 naming the field, and nothing is made', async () => {
      const before = (await rig.platform.sandboxes.all()).length;
      const create = async (network: Record<string, unknown>) => {
        const res = await fetch(`${rig.opts.apiUrl}/v2/sandboxes`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': rig.opts.apiKey },
          body: JSON.stringify({ templateID: 'base', network }),
        });
        return { status: res.status, message: ((await res.json()) as { message: string }).message };
      };
      const domain = await create({ allowOut: ['ok.skn.test', 'bad_name.skn.test'] });
      expect(domain).toMatchObject({ status: 400, message: expect.stringContaining('"network.allowOut.1"') });
      const deny = await create({ denyOut: ['allowed.skn.test'] });
      expect(deny).toMatchObject({ status: 400, message: expect.stringContaining('not supported for deny rules') });
      const proxy = await create({ egressProxy: { address: '10.77.0.1:1080' } });
      expect(proxy).toMatchObject({ status: 400, message: expect.stringContaining('"network.egressProxy.address"') });
      expect((await rig.platform.sandboxes.all()).length).toBe(before);
    });
  }
});
