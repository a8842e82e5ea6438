/**
 * Isolation on the sandbox network, tried from inside real sandboxes as root (commands through the unmodified SDK):
 * no sandbox reaches another, at L2 or routed through the gateway; a sandbox that takes another's address and
 * announces it does not get its calls, and frames it crafts with another's address or MAC never leave its port; nothing of the host, no private or link-local address, no IPv6; DNS only to
 * the resolver it is given. Each refusal has its legitimate counterpart beside it.
 */
import { createServer, type Server } from 'node:net';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createOciRuntime } from '../../../src/runtime/oci-runtime';
import { macFor } from '../../../src/runtime/network/bridge-network';
import { cleanupLeftovers } from '../../../src/runtime/cleanup';
import { baseRootfs, freshAgentPayload, ROOTFS_TIMEOUT_MS, uniqueName, waitForHealth } from '../runtime/helpers/common';
import { INTERNET } from './helpers/internet';
import { startRig, type NetworkRig } from './helpers/rig';

jest.setTimeout(180_000);

let rig: NetworkRig;
let a: string;
let b: string;
const addressOf = new Map<string, string>();

beforeAll(async () => {
  rig = await startRig();
  for (let i = 0; i < 2; i++) {
    const s = await rig.sdk.create('base', rig.opts);
    addressOf.set(s.sandboxId, (await rig.platform.sandboxes.get(s.sandboxId)).address as string);
  }
  [a, b] = [...addressOf.keys()] as [string, string];
}, ROOTFS_TIMEOUT_MS);
afterAll(async () => rig?.close());

/** Whether a TCP connection from the sandbox to ip:port opens within 2 s. */
async function opens(sandboxID: string, ip: string, port: number): Promise<boolean> {
  const r = await rig.sh(sandboxID, `timeout 2 bash -c 'exec 3<>/dev/tcp/${ip}/${port}' && echo open || echo closed`);
  return r.stdout.trim() === 'open';
}

test('no sandbox reaches another, directly or routed through the gateway; the gateway reaches both', async () => {
  expect(await opens(a, addressOf.get(b) as string, 49983)).toBe(false);
  // Routed through the gateway instead of on the link.
  await rig.sh(a, `ip route add ${addressOf.get(b)}/32 via ${rig.net.gateway}`);
  expect(await opens(a, addressOf.get(b) as string, 49983)).toBe(false);
  // What may reach them: the platform and the gateway, from the root side.
  for (const id of [a, b]) expect((await rig.sdk.call<{ stdout: string }>(id, 'commands.run', 'hostname')).stdout.trim()).toBe(id);
  expect(await opens(a, INTERNET.web, 80)).toBe(true);
});

test("a root sandbox that takes another's address and MAC and announces them does not get the victim's calls", async () => {
  const victim = addressOf.get(b) as string;
  const mac = execFileSync('ip', ['-n', rig.net.namespace, 'neigh', 'show', victim], { encoding: 'utf8' }).split(' ')[4];
  const own = (await rig.sh(a, 'cat /sys/class/net/eth0/address')).stdout.trim();
  const route = `ip route replace default via ${rig.net.gateway}`;
  // Run detached: while it wears the victim's MAC the attacker's own agent is cut off (its frames are dropped),
  // and it restores itself at the end.
  const script = [
    `ip addr add ${victim}/32 dev eth0`,
    'echo 1 > /proc/sys/net/ipv4/conf/eth0/arp_notify',
    // Down and up: the kernel announces every address of eth0 (gratuitous ARP), the victim's included.
    `ip link set eth0 down; ip link set eth0 up; ${route}`,
    `curl -s -m 3 --interface ${victim} http://${INTERNET.web}/ || echo spoofed-source-refused`,
    `ip link set eth0 down; ip link set eth0 address ${mac}; ip link set eth0 up; ${route}`,
    `curl -s -m 3 --interface ${victim} http://${INTERNET.web}/ || echo spoofed-mac-refused`,
    `ip link set eth0 down; ip link set eth0 address ${own}; ip addr del ${victim}/32 dev eth0; ip link set eth0 up; ${route}`,
    'echo done',
  ].join('\n');
  await rig.sdk.call(a, 'files.write', '/tmp/attack.sh', script);
  await rig.sh(a, 'nohup bash /tmp/attack.sh > /tmp/attack.log 2>&1 &');
  // Meanwhile, calls for the victim (the gateway's, the platform's) keep reaching the victim.
  await rig.sh(b, 'echo victim > /tmp/who');
  const deadline = Date.now() + 20_000;
  let log = '';
  while (!log.includes('done') && Date.now() < deadline) {
    expect((await rig.sh(b, 'cat /tmp/who')).stdout.trim()).toBe('victim');
    log = await rig.sh(a, 'cat /tmp/attack.log', 5000).then(
      (r) => r.stdout,
      () => '',
    );
  }
  expect(log).toContain('spoofed-source-refused');
  expect(log).toContain('spoofed-mac-refused');
  expect(log).toContain('done');
  for (let i = 0; i < 3; i++) expect((await rig.sh(b, 'cat /tmp/who')).stdout.trim()).toBe('victim');
  expect(execFileSync('ip', ['-n', rig.net.namespace, 'neigh', 'show', victim], { encoding: 'utf8' })).toContain('PERMANENT');
});

/**
 * Sends three UDP datagrams from the sandbox as raw Ethernet frames (an AF_PACKET socket, as root in the sandbox's
 * own network namespace), the same but for their source: its own MAC and address ("own"), its own MAC with another
 * address ("spoofed-address"), another MAC with its own address ("spoofed-mac").
 */
const RAW_SENDER = `
import socket, struct, sys
own_mac, gw_mac, own_ip, other_ip, other_mac, dst, port = sys.argv[1:8]
def frame(src_mac, src_ip, payload):
    udp = struct.pack('!HHHH', 40000, int(port), 8 + len(payload), 0) + payload
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0, socket.inet_aton(src_ip), socket.inet_aton(dst))
    words = sum(struct.unpack('!10H', ip))
    words = (words >> 16) + (words & 0xFFFF)
    ip = ip[:10] + struct.pack('!H', ~(words + (words >> 16)) & 0xFFFF) + ip[12:]
    return bytes.fromhex(gw_mac.replace(':', '')) + bytes.fromhex(src_mac.replace(':', '')) + b'\\x08\\x00' + ip + udp
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(('eth0', 0))
for src_mac, src_ip, payload in [(own_mac, own_ip, b'own'), (own_mac, other_ip, b'spoofed-address'), (other_mac, own_ip, b'spoofed-mac')]:
    s.send(frame(src_mac, src_ip, payload))
print('sent')
`;

test("frames a sandbox crafts with another's address or MAC never leave its port; its own do", async () => {
  const port = 9999;
  // The receiver, on the internet stand-in: every datagram's payload and source address, one line each.
  const receiver = spawn(
    'ip',
    [
      'netns',
      'exec',
      rig.internet.namespace,
      process.execPath,
      '-e',
      `const s = require('node:dgram').createSocket('udp4'); s.on('message', (m, r) => console.log(m + ' ' + r.address)); s.bind(${port}, () => console.log('ready'));`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    let out = '';
    receiver.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const until = async (what: string) => {
      for (const deadline = Date.now() + 10_000; !out.includes(what) && Date.now() < deadline; )
        await new Promise((r) => setTimeout(r, 50));
    };
    await until('ready');
    const own = addressOf.get(a) as string;
    const ownMac = (await rig.sh(a, 'cat /sys/class/net/eth0/address')).stdout.trim();
    await rig.sdk.call(a, 'files.write', '/tmp/raw.py', RAW_SENDER);
    const sent = await rig.sh(
      a,
      `python3 /tmp/raw.py ${ownMac} ${macFor(rig.net.gateway)} ${own} ${addressOf.get(b)} ${macFor(addressOf.get(b) as string)} ${INTERNET.web} ${port}`,
    );
    expect(sent.stdout.trim()).toBe('sent');
    await until('own');
    // The crafted frames went out before the one that arrived; a moment more for any straggler.
    await new Promise((r) => setTimeout(r, 500));
    expect(out.trim().split('\n').slice(1)).toEqual([`own ${own}`]);
  } finally {
    receiver.kill();
  }
});

test("nothing of the host: a listener on the root side's addresses is out of reach, the platform's own calls are not", async () => {
  const listener: Server = createServer((s) => s.end('host service\n'));
  await new Promise<void>((resolve) => listener.listen(0, '0.0.0.0', resolve));
  const port = (listener.address() as { port: number }).port;
  try {
    const victim = addressOf.get(a) as string;
    expect(await opens(b, rig.net.hostAddress, port)).toBe(false);
    expect(await opens(b, rig.net.gateway, port)).toBe(false);
    expect(await opens(b, rig.net.gateway, 22)).toBe(false);
    // The root side itself reaches the sandbox (that is how the gateway works).
    const seen = execFileSync('curl', ['-s', '-m', '5', '-o', '/dev/null', '-w', '%{http_code}', `http://${victim}:49983/health`], {
      encoding: 'utf8',
    });
    expect(seen).toBe('204');
  } finally {
    listener.close();
  }
});

test('private and link-local destinations are refused, public ones pass; DNS only to the given resolver; no IPv6', async () => {
  expect(await opens(a, INTERNET.web, 80)).toBe(true);
  expect(await opens(a, INTERNET.metadata, 80)).toBe(false);
  expect(await opens(a, INTERNET.privateService, 80)).toBe(false);
  // Port 53 is no key to private space: only the resolver the sandbox is given answers there.
  expect(await opens(a, INTERNET.privateService, 53)).toBe(false);
  expect(await opens(a, INTERNET.resolver, 53)).toBe(true);
  expect(await opens(a, INTERNET.resolver, 80)).toBe(false);
  const v6 = await rig.sh(a, 'cat /proc/net/if_inet6 | grep -v " lo$" || echo none');
  expect(v6.stdout.trim()).toBe('none');
  // Even an address root adds by hand goes nowhere: the bridge drops IPv6.
  const added = await rig.sh(
    a,
    `ip -6 addr add fd00::99/64 dev eth0 nodad 2>&1; timeout 3 bash -c 'exec 3<>/dev/tcp/fd00::1/80' && echo open || echo closed`,
  );
  expect(added.stdout.trim().split('\n').at(-1)).toBe('closed');
});

test('an agent refuses calls without its token from its first connection on, before any /init', async () => {
  const scratch = fs.mkdtempSync('/var/tmp/sk-net-token-');
  const instance = uniqueName('tk');
  const roots = { stateRoot: path.join(scratch, 'state'), dataRoot: path.join(scratch, 'data') };
  try {
    const agent = await freshAgentPayload(path.join(scratch, 'bundle'));
    const rt = createOciRuntime({ instance, ...roots, network: rig.net.network, agent });
    const network = await rig.net.network.attach('early');
    await rt.create({ sandboxID: 'early', layers: [await baseRootfs()], memoryMB: 256, cpuCount: 1, network, accessToken: 'the-token' });
    expect(await waitForHealth(network.address, 49983)).toBe(204);
    const listDir = (headers: Record<string, string>) =>
      fetch(`http://${network.address}:49983/filesystem.Filesystem/ListDir`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'connect-protocol-version': '1', ...headers },
        body: '{"path":"/","depth":1}',
      }).then((r) => r.status);
    expect(await listDir({})).toBe(401);
    expect(await listDir({ 'X-Access-Token': 'a-guess' })).toBe(401);
    // Nor can a caller without the token claim the sandbox through /init.
    const init = await fetch(`http://${network.address}:49983/init`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"accessToken":"mine-now"}',
    });
    expect(init.status).toBe(401);
    expect(await listDir({ 'X-Access-Token': 'the-token' })).toBe(200);
  } finally {
    // Only what this test made (its instance: the container, the disk, the shared mount of its data directory; the
    // rig's sandboxes share the network, so only this sandbox's attachment).
    await cleanupLeftovers({ instance, ...roots }).catch(() => undefined);
    await rig.net.network.detach('early');
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});

test("the agent's token is in no environment a process of the unprivileged user can read", async () => {
  const res = await fetch(`${rig.opts.apiUrl}/sandboxes/${b}`, { headers: { 'x-api-key': rig.opts.apiKey } });
  const token = ((await res.json()) as { envdAccessToken: string }).envdAccessToken;
  const probe = `env | grep -c -F ${token}; grep -l -a -F ${token} /proc/[0-9]*/environ 2>/dev/null | wc -l`;
  const asUser = await rig.sdk.call<{ stdout: string }>(b, 'commands.run', `${probe}; true`, { user: 'user' });
  expect(asUser.stdout.split('\n').slice(0, 2)).toEqual(['0', '0']);
  // The same probe as root finds it (in the agent's own environment at start): the probe itself works.
  const asRoot = await rig.sh(b, probe);
  expect(Number(asRoot.stdout.split('\n')[1])).toBeGreaterThan(0);
});
