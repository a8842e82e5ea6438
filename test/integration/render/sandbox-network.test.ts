import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SANDBOX_CHAINS, STANDALONE_BRIDGE, renderSandboxNetworkScript } from '../../../src/render';

/**
 * Runs the rendered sandbox-network script for real in namespaces this test makes and removes: a sandbox host (runs
 * the script; stands for the host's own namespace), the platform's sandbox namespace `<instance>.host` with its `sb`
 * bridge and link into the host (as the runtime's standalone network makes it), a sandbox on that bridge, and an
 * "internet" holding a public server, the proxy, a private (VPC) address and the metadata address. The machine's own
 * namespace and firewall are never touched.
 */
const tag = `${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}`;
const HOST = `skt-snh-${tag}`;
const INSTANCE = `skt-snp-${tag}`;
const PLATFORM_NS = `${INSTANCE}.host`;
const SANDBOX = `skt-sns-${tag}`;
const NET = `skt-sni-${tag}`;
const SANDBOX_RANGE = '198.19.0.0/16';
const PUBLIC = '203.0.113.50';
const PROXY = '203.0.113.60';
const HOST_UPLINK = '203.0.113.1';
const VPC = '10.0.0.0/16';
const VPC_PEER = '10.0.0.5';
const METADATA = '169.254.169.254';

function run(args: string[], env?: NodeJS.ProcessEnv) {
  const result = spawnSync(args[0]!, args.slice(1), { encoding: 'utf8', timeout: 20_000, env });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
function must(args: string[]): string {
  const result = run(args);
  if (result.status !== 0) throw new Error(`${args.join(' ')} failed (${result.status}): ${result.stderr}`);
  return result.stdout;
}
const inNs = (ns: string, args: string[]) => run(['ip', 'netns', 'exec', ns, ...args]);
const mustIn = (ns: string, args: string[]) => must(['ip', 'netns', 'exec', ns, ...args]);

/** What a TCP connection from the sandbox to ADDR:PORT gets back (the server answers with the peer address), or ''. */
function connectFromSandbox(address: string, port: number): string {
  return inNs(SANDBOX, ['nc', '-w', '2', '-N', address, String(port)]).stdout.trim();
}

async function listening(ns: string, port: number): Promise<void> {
  for (let i = 0; i < 50; i++) {
    if (inNs(ns, ['ss', '-Hltn', `sport = :${port}`]).stdout.trim() !== '') return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listens on ${port} in ${ns}`);
}

describe('sandbox network script in throwaway namespaces', () => {
  let dir: string;
  let script: string;
  const children: ChildProcess[] = [];
  const runScript = (action: 'up' | 'down') => run(['ip', 'netns', 'exec', HOST, 'sh', script, action]);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skt-sandbox-net-'));
    script = join(dir, 'sandbox-network.sh');
    writeFileSync(
      script,
      renderSandboxNetworkScript({
        addresses: { kind: 'static', cidr: SANDBOX_RANGE },
        proxy: { ip: PROXY, port: 8388, protocols: ['tcp', 'udp'] },
        hostNetworks: [VPC],
        routedFrom: [],
      }),
      { mode: 0o755 },
    );
    for (const ns of [HOST, PLATFORM_NS, SANDBOX, NET]) {
      must(['ip', 'netns', 'add', ns]);
      mustIn(ns, ['ip', 'link', 'set', 'lo', 'up']);
    }
    // host <-> internet
    must(['ip', '-n', HOST, 'link', 'add', 'up0', 'type', 'veth', 'peer', 'name', 'down0', 'netns', NET]);
    mustIn(HOST, ['ip', 'addr', 'add', `${HOST_UPLINK}/24`, 'dev', 'up0']);
    mustIn(HOST, ['ip', 'link', 'set', 'up0', 'up']);
    mustIn(HOST, ['ip', 'route', 'add', 'default', 'via', PUBLIC]);
    for (const address of [`${PUBLIC}/24`, `${PROXY}/32`, `${VPC_PEER}/32`, `${METADATA}/32`])
      mustIn(NET, ['ip', 'addr', 'add', address, 'dev', 'down0']);
    mustIn(NET, ['ip', 'link', 'set', 'down0', 'up']);
    mustIn(NET, ['ip', 'route', 'add', SANDBOX_RANGE, 'via', HOST_UPLINK]);
    // The platform's sandbox network, as the runtime's standalone network makes it.
    mustIn(PLATFORM_NS, ['ip', 'link', 'add', STANDALONE_BRIDGE, 'type', 'bridge']);
    mustIn(PLATFORM_NS, ['ip', 'addr', 'add', '198.19.77.1/24', 'dev', STANDALONE_BRIDGE]);
    mustIn(PLATFORM_NS, ['ip', 'link', 'set', STANDALONE_BRIDGE, 'up']);
    must(['ip', '-n', HOST, 'link', 'add', 'skh0', 'type', 'veth', 'peer', 'name', 'host0', 'netns', PLATFORM_NS]);
    mustIn(PLATFORM_NS, ['ip', 'link', 'set', 'host0', 'master', STANDALONE_BRIDGE, 'up']);
    mustIn(HOST, ['ip', 'addr', 'add', '198.19.77.254/24', 'dev', 'skh0']);
    mustIn(HOST, ['ip', 'link', 'set', 'skh0', 'up']);
    must(['ip', '-n', PLATFORM_NS, 'link', 'add', 'sbh0', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', SANDBOX]);
    mustIn(PLATFORM_NS, ['ip', 'link', 'set', 'sbh0', 'master', STANDALONE_BRIDGE, 'up']);
    mustIn(SANDBOX, ['ip', 'addr', 'add', '198.19.77.2/24', 'dev', 'eth0']);
    mustIn(SANDBOX, ['ip', 'link', 'set', 'eth0', 'up']);
    mustIn(SANDBOX, ['ip', 'route', 'add', 'default', 'via', '198.19.77.1']);
    // What the platform's --route-out does in its namespace (host-network.ts).
    mustIn(PLATFORM_NS, ['sysctl', '-q', '-w', 'net.ipv4.ip_forward=1']);
    mustIn(PLATFORM_NS, ['ip', 'route', 'add', 'default', 'via', '198.19.77.254']);
    // Every address of the internet namespace answers with the address it sees the connection come from.
    for (const port of [8080, 8388]) {
      const server = spawn('ip', ['netns', 'exec', NET, 'socat', `TCP-LISTEN:${port},reuseaddr,fork`, 'SYSTEM:echo $SOCAT_PEERADDR'], {
        stdio: 'ignore',
      });
      children.push(server);
      await listening(NET, port);
    }
    // A service on the host itself, which sandboxes must not reach.
    const own = spawn('ip', ['netns', 'exec', HOST, 'socat', 'TCP-LISTEN:7000,reuseaddr,fork', 'SYSTEM:echo host'], { stdio: 'ignore' });
    children.push(own);
    await listening(HOST, 7000);
  }, 60_000);

  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
    for (const ns of [SANDBOX, PLATFORM_NS, HOST, NET]) spawnSync('ip', ['netns', 'del', ns]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('up, run twice, leaves one jump per chain and forwarding on', () => {
    for (let i = 0; i < 2; i++) {
      const up = runScript('up');
      expect({ status: up.status, stderr: up.stderr }).toEqual({ status: 0, stderr: '' });
    }
    const jumps = (table: string, chain: string, target: string) =>
      mustIn(HOST, ['iptables', '-w', '-t', table, '-S', chain])
        .split('\n')
        .filter((l) => l.endsWith(`-j ${target}`));
    expect(jumps('filter', 'FORWARD', SANDBOX_CHAINS.forward)).toHaveLength(1);
    expect(jumps('filter', 'INPUT', SANDBOX_CHAINS.input)).toHaveLength(1);
    expect(jumps('nat', 'POSTROUTING', SANDBOX_CHAINS.nat)).toHaveLength(1);
    expect(mustIn(HOST, ['sysctl', '-n', 'net.ipv4.ip_forward']).trim()).toBe('1');
  });

  it('lets a sandbox reach the internet and the proxy, leaving from the host address (NAT)', () => {
    expect(connectFromSandbox(PUBLIC, 8080)).toBe(HOST_UPLINK);
    expect(connectFromSandbox(PROXY, 8388)).toBe(HOST_UPLINK);
  });

  it('keeps a sandbox away from the VPC, the metadata service and the host itself', () => {
    expect(connectFromSandbox(VPC_PEER, 8080)).toBe('');
    expect(connectFromSandbox(METADATA, 8080)).toBe('');
    expect(connectFromSandbox('198.19.77.254', 7000)).toBe('');
    expect(connectFromSandbox(HOST_UPLINK, 7000)).toBe('');
    // The same addresses answer the host itself: it is the rules, not the routes, that stop the sandbox.
    expect(inNs(HOST, ['nc', '-w', '2', '-N', VPC_PEER, '8080']).stdout.trim()).toBe(HOST_UPLINK);
  });

  it('down removes the chains and their jumps; a second down is fine', () => {
    for (let i = 0; i < 2; i++) expect(runScript('down').status).toBe(0);
    for (const [table, chain] of [
      ['filter', SANDBOX_CHAINS.forward],
      ['filter', SANDBOX_CHAINS.input],
      ['nat', SANDBOX_CHAINS.nat],
    ] as const) {
      expect(inNs(HOST, ['iptables', '-w', '-t', table, '-S', chain]).status).not.toBe(0);
    }
    expect(mustIn(HOST, ['iptables', '-w', '-S', 'FORWARD']).trim()).toBe('-P FORWARD ACCEPT');
    expect(mustIn(HOST, ['iptables', '-w', '-t', 'nat', '-S', 'POSTROUTING']).trim()).toBe('-P POSTROUTING ACCEPT');
  });

  it("a fleet host's script takes the delegated prefix from the instance metadata and writes the host facts", async () => {
    // IMDSv2 as the script asks it: a token first, then each path with it. (AWS cannot run here: its answers are
    // made up, the script's calls are real.)
    const imds = `
      const answers = { 'mac': '0e:aa:bb:cc:dd:ee', 'instance-id': 'i-0fleet123', 'local-ipv4': '10.0.0.23',
        'network/interfaces/macs/0e:aa:bb:cc:dd:ee/ipv4-prefix': '10.0.1.16/28\\n10.0.1.32/28' };
      require('http').createServer((req, res) => {
        if (req.method === 'PUT' && req.url === '/latest/api/token') return res.end('tok');
        const key = req.url.replace('/latest/meta-data/', '');
        if (req.headers['x-aws-ec2-metadata-token'] !== 'tok' || !(key in answers)) { res.statusCode = 401; return res.end(); }
        res.end(answers[key]);
      }).listen(80, '${METADATA}');`;
    const server = spawn('ip', ['netns', 'exec', NET, process.execPath, '-e', imds], { stdio: 'ignore' });
    children.push(server);
    await listening(NET, 80);
    const fleetScript = join(dir, 'fleet.sh');
    writeFileSync(
      fleetScript,
      renderSandboxNetworkScript({
        addresses: { kind: 'delegated' },
        proxy: { ip: PROXY, port: 8388, protocols: ['tcp'] },
        hostNetworks: [VPC],
        routedFrom: [VPC],
      }),
      { mode: 0o755 },
    );
    const facts = join(dir, 'host.env');
    const up = run(['ip', 'netns', 'exec', HOST, 'sh', fleetScript, 'up'], { ...process.env, SANDBOX_KIT_HOST_FACTS: facts });
    expect({ status: up.status, stderr: up.stderr }).toEqual({ status: 0, stderr: '' });
    expect(up.stdout).toContain('rules up for sandboxes in 10.0.1.16/28 10.0.1.32/28');
    expect(readFileSync(facts, 'utf8')).toBe('HOST_ID=i-0fleet123\nHOST_ADDRESS=10.0.0.23\nSANDBOX_SUBNET=10.0.1.16/28\n');
    // The VPC (the gateways) may open connections to the delegated prefixes.
    expect(mustIn(HOST, ['iptables', '-w', '-S', SANDBOX_CHAINS.forward])).toContain(
      `-A ${SANDBOX_CHAINS.forward} -s ${VPC} -d 10.0.1.32/28 -p tcp -j ACCEPT`,
    );
    expect(run(['ip', 'netns', 'exec', HOST, 'sh', fleetScript, 'down']).status).toBe(0);
  });
});
