/**
 * `network.rules` with secrets, by attack, through the unmodified SDK on the real runtime and network: a TLS server
 * behind the sandbox network (its own address in the internet stand-in, a certificate for *.sec.test from a test CA
 * the platform is told to trust upstream) receives the header with the secret's value from `curl https://host/` in
 * the sandbox; the value is nowhere the sandbox can read; a request to a host without rules is not touched; a rule
 * does not grant access; a placeholder of another team's secret or of an unknown name is refused, nothing sent;
 * updateNetwork replaces the rules; kill removes the CA and its leaves. Root only.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { type NetworkRig, startRig } from './helpers/rig';
import { type TestCertificates, testCertificates } from '../../helpers/tls-domain';

jest.setTimeout(300_000);

const SERVER_ADDRESS = '203.0.113.3';
const RULE_HOST = 'api.sec.test';
const OTHER_HOST = 'other.sec.test';
const VALUE = `sk-sec-${Math.random().toString(36).slice(2)}-never-inside`;
const BETA_VALUE = `beta-${Math.random().toString(36).slice(2)}`;

/** The TLS server: answers every request with the headers it got, and counts them. */
const SERVER = `
const https = require('node:https');
const fs = require('node:fs');
const [dir, address] = process.argv.slice(1);
let count = 0;
https.createServer({ key: fs.readFileSync(dir + '/site.key'), cert: fs.readFileSync(dir + '/site.crt') }, (req, res) => {
  count += 1;
  if (req.url === '/count') { res.end(String(count - 1)); count -= 1; return; }
  res.end(JSON.stringify({ sni: req.socket.servername, headers: req.headers }));
}).listen(8443, address, () => console.log('ready'));
`;

let rig: NetworkRig;
let certs: TestCertificates;
let server: ChildProcess | undefined;
let beta: { apiKey: string; apiUrl: string; sandboxUrl: string };

beforeAll(async () => {
  // One certificate for *.sec.test (both hosts) from a test CA the platform is told to trust upstream.
  certs = await testCertificates('sec.test');
  rig = await startRig({ egressUpstreamCaFiles: [certs.caFile] }, 'sec');
  execFileSync('ip', ['-n', rig.internet.namespace, 'addr', 'add', `${SERVER_ADDRESS}/32`, 'dev', 'eth0']);
  // The stand-in holds *:443 there: its port 443 leads to the server's 8443.
  execFileSync('ip', [
    'netns',
    'exec',
    rig.internet.namespace,
    'iptables',
    '-w',
    '-t',
    'nat',
    '-A',
    'PREROUTING',
    '-d',
    SERVER_ADDRESS,
    '-p',
    'tcp',
    '--dport',
    '443',
    '-j',
    'DNAT',
    '--to-destination',
    `${SERVER_ADDRESS}:8443`,
  ]);
  server = spawn('ip', ['netns', 'exec', rig.internet.namespace, process.execPath, '-e', SERVER, certs.dir, SERVER_ADDRESS], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    server?.once('exit', (code) => reject(new Error(`the TLS server exited (${code})`)));
    server?.stdout?.once('data', () => resolve());
  });
  // A second team, with a secret of its own.
  const admin = { 'x-api-key': rig.platform.apiKey, 'content-type': 'application/json' };
  await fetch(`${rig.platform.url}/admin/teams`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'sec-beta' }) });
  const key = (await (
    await fetch(`${rig.platform.url}/admin/keys`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ team: 'sec-beta', name: 'ci' }),
    })
  ).json()) as { key: string };
  beta = { ...rig.opts, apiKey: key.key };
  await rig.sdk.secret('create', 'sec-beta-only', BETA_VALUE, beta);
  await rig.sdk.secret('create', 'sec-api-key', VALUE, rig.opts);
}, 300_000);

afterAll(async () => {
  server?.kill('SIGKILL');
  await rig?.close();
  await certs?.close();
});

const ph = (name: string) => ['$', `{e2b.secrets.${name}}`].join('');
const resolveArgs = `--resolve ${RULE_HOST}:443:${SERVER_ADDRESS} --resolve ${OTHER_HOST}:443:${SERVER_ADDRESS}`;

async function curlJson(
  id: string,
  host: string,
  extra = '',
): Promise<{ exitCode: number; body: { headers?: Record<string, string> } | string }> {
  const r = await rig.sh(id, `curl -sS --max-time 20 ${resolveArgs} ${extra} https://${host}/`);
  try {
    return { exitCode: r.exitCode, body: JSON.parse(r.stdout) };
  } catch {
    return { exitCode: r.exitCode, body: `${r.stdout}${r.stderr}` };
  }
}

/** How many requests the TLS server has answered. */
async function served(): Promise<number> {
  return Number(
    execFileSync(
      'ip',
      [
        'netns',
        'exec',
        rig.internet.namespace,
        'curl',
        '-sk',
        '--resolve',
        `${RULE_HOST}:8443:${SERVER_ADDRESS}`,
        `https://${RULE_HOST}:8443/count`,
      ],
      {
        encoding: 'utf8',
      },
    ),
  );
}

test('the rule host gets the header with the secret; the sandbox trusts its CA, sees placeholders only, and never the value', async () => {
  const rules = { [RULE_HOST]: [{ transform: { headers: { Authorization: `Bearer ${ph('sec-api-key')}`, 'X-Fixed': 'plain' } } }] };
  const { sandboxId: id } = await rig.sdk.create('base', { ...rig.opts, network: { rules } });
  const info = await rig.sdk.call<{ network: { rules: unknown } }>(id, 'getInfo');
  expect(info.network.rules).toEqual({
    [RULE_HOST]: [{ transform: { headers: { Authorization: `Bearer ${ph('sec-api-key')}`, 'X-Fixed': 'plain' } } }],
  });

  // curl with the image's trust store: the relay's leaf for the rule host verifies.
  const got = await curlJson(id, RULE_HOST, `-H 'Authorization: sandbox-own' -H 'X-Mine: kept'`);
  expect(got.exitCode).toBe(0);
  const headers = (got.body as { headers: Record<string, string> }).headers;
  expect(headers.authorization).toBe(`Bearer ${VALUE}`);
  expect(headers['x-fixed']).toBe('plain');
  expect(headers['x-mine']).toBe('kept');
  // Node in the sandbox trusts it too (NODE_EXTRA_CA_CERTS), as its unprivileged user.
  const node = await rig.sh(
    id,
    `su user -c "/opt/sandbox-kit/node -e \\"require('node:https').get({host:'${SERVER_ADDRESS}',servername:'${RULE_HOST}',headers:{host:'${RULE_HOST}'}},r=>console.log(r.statusCode)).on('error',e=>console.log(e.message))\\""`,
  );
  expect(node.stdout.trim()).toBe('200');

  // A host without rules is not intercepted: its own certificate (the test CA's, which the sandbox does not trust).
  expect((await curlJson(id, OTHER_HOST)).exitCode).not.toBe(0);
  await rig.sdk.call(id, 'files.write', '/tmp/test-ca.pem', fs.readFileSync(certs.caFile, 'utf8'));
  const other = await curlJson(id, OTHER_HOST, `--cacert /tmp/test-ca.pem -H 'Authorization: ${ph('sec-api-key')}'`);
  expect(other.exitCode).toBe(0);
  expect((other.body as { headers: Record<string, string> }).headers.authorization).toBe(ph('sec-api-key'));

  // Nowhere it can read, as root: environments, files it can reach, its own processes; no CA key.
  const [a, b] = [VALUE.slice(0, 8), VALUE.slice(8)];
  const search = await rig.sh(
    id,
    `printf '%s%s' '${a}' '${b}' > /.p; grep -rlsF -f /.p /etc /home /root /tmp /run /var /opt /usr/local 2>/dev/null; cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | grep -cF -f /.p; rm /.p; find / -xdev -name '*.key' -path '*egress*' 2>/dev/null; env | grep -c CERT`,
  );
  const lines = search.stdout.trim().split('\n');
  expect(lines).toEqual(['0', '2']);
  expect((await rig.sh(id, `ls ${rig.stateDir} 2>&1`)).stdout).toMatch(/No such file/);
  expect(
    (await rig.sh(id, 'echo $SSL_CERT_FILE; tail -c 300 $SSL_CERT_FILE | grep -c "END CERTIFICATE"; echo x >> $SSL_CERT_FILE')).exitCode,
  ).not.toBe(0);

  // Kill: the CA and its leaves go.
  const caDir = join(rig.stateDir, 'egress-ca', id);
  expect(fs.readdirSync(caDir).sort()).toEqual(
    expect.arrayContaining(['ca.key', 'ca.pem', `leaf-${RULE_HOST}.key`, `leaf-${RULE_HOST}.pem`]),
  );
  expect(fs.statSync(join(caDir, 'ca.key')).mode & 0o777).toBe(0o600);
  expect(await rig.sdk.call(id, 'kill')).toBe(true);
  expect(fs.existsSync(caDir)).toBe(false);
});

test("a rule grants no access; another team's secret and an unknown name are refused with nothing sent; updateNetwork replaces the rules", async () => {
  const rules = (name: string) => ({ [RULE_HOST]: [{ transform: { headers: { Authorization: ph(name) } } }] });
  // Rules for a denied host: still refused.
  const denied = await rig.sdk.create('base', { ...rig.opts, network: { denyOut: ['0.0.0.0/0'], rules: rules('sec-api-key') } });
  const before = await served();
  expect((await curlJson(denied.sandboxId, RULE_HOST)).exitCode).not.toBe(0);
  expect(await served()).toBe(before);
  // Allowed by address: it passes and is transformed.
  await rig.sdk.call(denied.sandboxId, 'updateNetwork', {
    denyOut: ['0.0.0.0/0'],
    allowOut: [SERVER_ADDRESS],
    rules: rules('sec-api-key'),
  });
  const ok = await curlJson(denied.sandboxId, RULE_HOST);
  expect((ok.body as { headers: Record<string, string> }).headers.authorization).toBe(VALUE);

  // Another team's secret, an unknown name: 502 with the reason, and the server got nothing.
  for (const name of ['sec-beta-only', 'sec-nope']) {
    await rig.sdk.call(denied.sandboxId, 'updateNetwork', { allowOut: [SERVER_ADDRESS], denyOut: ['0.0.0.0/0'], rules: rules(name) });
    const n = await served();
    const r = await rig.sh(denied.sandboxId, `curl -sS --max-time 20 ${resolveArgs} -w '%{http_code}' https://${RULE_HOST}/`);
    expect(r.stdout).toMatch(new RegExp(`secret "${name}".*not one of this sandbox's team.*502$`, 's'));
    expect(r.stdout).not.toContain(BETA_VALUE);
    expect(await served()).toBe(n);
  }

  // Replaced: the new rule's header, not the old one's.
  await rig.sdk.call(denied.sandboxId, 'updateNetwork', {
    rules: { [RULE_HOST]: [{ transform: { headers: { 'X-Other': `k=${ph('sec-api-key')}` } } }] },
  });
  const replaced = (await curlJson(denied.sandboxId, RULE_HOST)).body as { headers: Record<string, string> };
  expect(replaced.headers['x-other']).toBe(`k=${VALUE}`);
  expect(replaced.headers.authorization).toBeUndefined();
  expect(await rig.sdk.call(denied.sandboxId, 'kill')).toBe(true);
});

test('bad rules get 400s naming the field; rules on a sandbox created without them are refused with a reason', async () => {
  const bad: Array<[unknown, RegExp]> = [
    [{ '*': [] }, /network\.rules\.\*/],
    [{ '1.2.3.4': [] }, /network\.rules\.1\.2\.3\.4/],
    [{ [RULE_HOST]: [{ transform: { headers: { Host: 'x' } } }] }, /frames the request/],
    [{ [RULE_HOST]: [{ transform: { headers: { 'X-A': 'a\r\nb' } } }] }, /without control characters/],
    [{ [RULE_HOST]: [{ transform: { headers: { 'X-A': ['$', '{e2b.identity.tokens.x}'].join('') } } }] }, /iam token/],
    [{ [RULE_HOST]: [{ transform: { body: 'x' } }] }, /unknown key "body"/],
  ];
  for (const [rules, message] of bad) {
    const res = await fetch(`${rig.platform.url}/v2/sandboxes`, {
      method: 'POST',
      headers: { 'x-api-key': rig.platform.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ templateID: 'base', network: { rules } }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(message);
  }
  const plain = await rig.sdk.create('base', rig.opts);
  await expect(rig.sdk.call(plain.sandboxId, 'updateNetwork', { rules: {} })).resolves.toBeNull();
  await expect(
    rig.sdk.call(plain.sandboxId, 'updateNetwork', { rules: { [RULE_HOST]: [{ transform: { headers: { A: 'b' } } }] } }),
  ).rejects.toThrow(/created without network.rules/);
  expect(await rig.sdk.call(plain.sandboxId, 'kill')).toBe(true);
});

test('a fork keeps the rules with a CA of its own; a sandbox paused to disk and resumed keeps its rules and its CA trust', async () => {
  const rules = { [RULE_HOST]: [{ transform: { headers: { Authorization: `Bearer ${ph('sec-api-key')}` } } }] };
  const source = await rig.sdk.create('base', { ...rig.opts, network: { rules } });
  const [fork] = await rig.sdk.fork(source.sandboxId, {});
  expect(fork?.error).toBeUndefined();
  const forkID = fork?.sandboxId as string;
  expect((await rig.sdk.call<{ network: { rules: unknown } }>(forkID, 'getInfo')).network.rules).toEqual(rules);
  const authorization = async (id: string) => {
    const got = await curlJson(id, RULE_HOST);
    expect([got.exitCode, typeof got.body === 'string' ? got.body : '']).toEqual([0, '']);
    return (got.body as { headers: Record<string, string> }).headers.authorization;
  };
  expect(await authorization(forkID)).toBe(`Bearer ${VALUE}`);

  // Its own CA: another key pair in its own directory; its trust store holds its CA and not the source's.
  const caOf = (id: string) => fs.readFileSync(join(rig.stateDir, 'egress-ca', id, 'ca.pem'), 'utf8');
  const lineOf = (pem: string) => pem.split('\n')[3] as string;
  expect(caOf(forkID)).not.toBe(caOf(source.sandboxId));
  const trusts = async (id: string, pem: string) => (await rig.sh(id, `grep -cF '${lineOf(pem)}' "$SSL_CERT_FILE"`)).stdout.trim();
  expect([await trusts(forkID, caOf(forkID)), await trusts(forkID, caOf(source.sandboxId))]).toEqual(['1', '0']);
  // The source's end takes nothing of the fork's: its CA goes, the fork's stays and serves.
  const sourceCa = caOf(source.sandboxId);
  expect(await rig.sdk.call(source.sandboxId, 'kill')).toBe(true);
  expect(fs.existsSync(join(rig.stateDir, 'egress-ca', source.sandboxId))).toBe(false);
  expect(await authorization(forkID)).toBe(`Bearer ${VALUE}`);

  // Paused to disk (its processes and container gone, its files kept) and resumed by a connect: the same CA, trusted,
  // and the rules applied; rules replaced while it was on disk are the ones it comes back with.
  const forkCa = caOf(forkID);
  expect(await rig.sdk.call(forkID, 'pause', { keepMemory: false })).toBe(true);
  expect((await rig.platform.sandboxes.get(forkID)).pausedTo).toBe('disk');
  await rig.sdk.call(forkID, 'updateNetwork', {
    rules: { [RULE_HOST]: [{ transform: { headers: { Authorization: `Token ${ph('sec-api-key')}` } } }] },
  });
  await rig.sdk.connect(forkID, rig.opts);
  expect(caOf(forkID)).toBe(forkCa);
  expect([await trusts(forkID, forkCa), await trusts(forkID, sourceCa)]).toEqual(['1', '0']);
  expect(await authorization(forkID)).toBe(`Token ${VALUE}`);
  expect(await rig.sdk.call(forkID, 'kill')).toBe(true);
  expect(fs.existsSync(join(rig.stateDir, 'egress-ca', forkID))).toBe(false);
});
