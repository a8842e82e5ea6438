import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadStackConfig } from '../../../src/config';
import { ALWAYS_BYPASSED, NAT_CHAIN, renderNatChain } from '../../../src/render';
import { DEFAULT_AGENT_PORT } from '../../../src/contract';

/**
 * Runs the rendered NAT-chain script for real, inside a network namespace this test creates and deletes, so the
 * machine's own firewall is never touched.
 */
const NS = `skt-nat-${process.pid}-${Date.now().toString(36)}`;
const SERVER_IP = '203.0.113.10';
const EXTRA_BYPASS = ['192.0.2.0/24', '198.51.100.7/32'];
const config = loadStackConfig({ client: { bypassCidrs: EXTRA_BYPASS } });

function inNs(args: string[]) {
  const result = spawnSync('ip', ['netns', 'exec', NS, ...args], { encoding: 'utf8' });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function mustRun(args: string[]): string {
  const result = inNs(args);
  if (result.status !== 0) throw new Error(`${args.join(' ')} failed (${result.status}): ${result.stderr}`);
  return result.stdout;
}

const rules = (chain: string) => mustRun(['iptables', '-w', '-t', 'nat', '-S', chain]).trim().split('\n');

describe('NAT-chain script in a throwaway network namespace', () => {
  let dir: string;
  let script: string;
  const children: ChildProcess[] = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'skt-nat-'));
    script = join(dir, 'nat-chain.sh');
    writeFileSync(script, renderNatChain(config, SERVER_IP), { mode: 0o755 });
    const add = spawnSync('ip', ['netns', 'add', NS], { encoding: 'utf8' });
    if (add.status !== 0) throw new Error(`ip netns add ${NS}: ${add.stderr}`);
    mustRun(['ip', 'link', 'set', 'lo', 'up']);
    // A default route over a veth pair whose both ends stay in the namespace, so connections to "public" addresses
    // get as far as the OUTPUT chain (and, when not redirected, out onto a link where nobody answers).
    mustRun(['ip', 'link', 'add', 'skt0', 'type', 'veth', 'peer', 'name', 'skt1']);
    mustRun(['ip', 'link', 'set', 'skt1', 'up']);
    mustRun(['ip', 'link', 'set', 'skt0', 'up']);
    mustRun(['ip', 'addr', 'add', '198.18.0.1/24', 'dev', 'skt0']);
    mustRun(['ip', 'route', 'add', 'default', 'dev', 'skt0']);
  });

  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
    spawnSync('ip', ['netns', 'del', NS]);
    rmSync(dir, { recursive: true, force: true });
  });

  const expectedChain = [
    `-N ${NAT_CHAIN}`,
    // The agent's answers first: a connection the platform opened before the chain loaded is never redirected.
    `-A ${NAT_CHAIN} -p tcp -m tcp --sport ${DEFAULT_AGENT_PORT} -j RETURN`,
    ...[`${SERVER_IP}/32`, ...ALWAYS_BYPASSED, ...EXTRA_BYPASS].map((cidr) => `-A ${NAT_CHAIN} -d ${cidr} -j RETURN`),
    `-A ${NAT_CHAIN} -p tcp -j REDIRECT --to-ports 12345`,
  ];

  it('up, run twice, leaves one chain with the exact rules and one OUTPUT jump', () => {
    expect(inNs(['sh', script, 'up']).status).toBe(0);
    expect(inNs(['sh', script, 'up']).status).toBe(0);
    expect(rules(NAT_CHAIN)).toEqual(expectedChain);
    expect(rules('OUTPUT')).toEqual(['-P OUTPUT ACCEPT', `-A OUTPUT -p tcp -j ${NAT_CHAIN}`]);
    const chains = mustRun(['iptables', '-w', '-t', 'nat', '-S']).split('\n').filter((l) => l === `-N ${NAT_CHAIN}`);
    expect(chains).toHaveLength(1);
  });

  it('redirects TCP to a public address to the redirect port, and leaves bypassed destinations alone', async () => {
    const listener = spawn('ip', ['netns', 'exec', NS, 'socat', 'TCP-LISTEN:12345,reuseaddr,fork', 'SYSTEM:echo redirected'], { stdio: 'ignore' });
    children.push(listener);
    let ready = false;
    for (let i = 0; i < 50 && !ready; i++) {
      ready = inNs(['ss', '-Hltn', 'sport = :12345']).stdout.trim() !== '';
      if (!ready) await new Promise((r) => setTimeout(r, 100));
    }
    expect(ready).toBe(true);

    const viaProxy = inNs(['socat', '-T2', '-', 'TCP:198.51.100.20:80,connect-timeout=2']);
    expect(viaProxy.stdout.trim()).toBe('redirected');
    // The proxy's own address is returned, not redirected: the SYN goes out on the veth link and nobody answers.
    const bypassed = inNs(['socat', '-T1', '-', `TCP:${SERVER_IP}:80,connect-timeout=1`]);
    expect(bypassed.status).not.toBe(0);
    expect(bypassed.stdout).not.toContain('redirected');
  });

  it('down removes the jump and the chain, and running it again is harmless', () => {
    expect(inNs(['sh', script, 'down']).status).toBe(0);
    expect(rules('OUTPUT')).toEqual(['-P OUTPUT ACCEPT']);
    expect(inNs(['iptables', '-w', '-t', 'nat', '-S', NAT_CHAIN]).status).not.toBe(0);
    const again = inNs(['sh', script, 'down']);
    expect(again).toMatchObject({ status: 0, stderr: '' });
    expect(rules('OUTPUT')).toEqual(['-P OUTPUT ACCEPT']);
  });

  it('down also removes duplicate jumps left by hand, and up works again after it', () => {
    mustRun(['sh', script, 'up']);
    mustRun(['iptables', '-w', '-t', 'nat', '-A', 'OUTPUT', '-p', 'tcp', '-j', NAT_CHAIN]);
    mustRun(['sh', script, 'down']);
    expect(rules('OUTPUT')).toEqual(['-P OUTPUT ACCEPT']);
    mustRun(['sh', script, 'up']);
    expect(rules(NAT_CHAIN)).toEqual(expectedChain);
  });

  it('refuses an unknown action', () => {
    const result = inNs(['sh', script, 'sideways']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('usage:');
  });
});
