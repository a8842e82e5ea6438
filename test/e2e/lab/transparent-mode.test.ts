/**
 * Transparent mode, end to end: ss-redir, ss-local and the rendered NAT-chain script in a sandbox; every plain TCP
 * connection goes through the proxy except loopback and the proxy server itself.
 */
import { labUp, type Lab } from '../../../src/lab';
import { NAT_CHAIN } from '../../../src/render';
import { namespacesOf, requireBuilt, uniqueLabName, whoamiFrom } from '../../helpers/lab';

const name = uniqueLabName('tra');
let lab: Lab;

beforeAll(async () => {
  requireBuilt();
  lab = await labUp({ name, mode: 'transparent' });
});

afterAll(async () => {
  await lab?.down();
  expect(await namespacesOf(name)).toEqual([]);
});

/** Packet counters of the NAT chain, by destination (RETURN rules) and 'redirect'. */
async function chainCounters(): Promise<Record<string, number>> {
  const out = await lab.exec('sb1', ['iptables', '-w', '-t', 'nat', '-L', NAT_CHAIN, '-n', '-v', '-x']);
  expect(out.code).toBe(0);
  const counters: Record<string, number> = {};
  for (const line of out.stdout.split('\n').slice(2)) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 9) continue;
    const [pkts, , target] = cols;
    const destination = cols[8]!;
    counters[target === 'REDIRECT' ? 'redirect' : destination] = Number(pkts);
  }
  return counters;
}

test('a plain request from the sandbox reports the egress Elastic IP', async () => {
  const before = await chainCounters();
  expect(await whoamiFrom(lab, 'sb1')).toBe(lab.egressEip);
  const after = await chainCounters();
  expect(after.redirect).toBeGreaterThan(before.redirect!);
  // Without the proxy the sandbox host's address would show.
  expect(await whoamiFrom(lab, 'sbhost')).toBe(lab.plan.sandboxHostPublic);
});

test("connections to the proxy server's own address are not redirected", async () => {
  const counters = await chainCounters();
  // ss-redir's and ss-local's own connections to the server went through OUTPUT and matched the RETURN rule; were
  // they redirected, they would loop back into ss-redir and nothing would work.
  expect(counters[lab.ingressEip]).toBeGreaterThan(0);
});

test('traffic to 127.0.0.0/8 stays in the sandbox: a local service still answers', async () => {
  const before = await chainCounters();
  const script = [
    'node -e \'require("http").createServer((q,s)=>s.end("local\\n")).listen(18080,"127.0.0.1",()=>console.log("up"))\' & server=$!',
    'tries=0; until ss -Hltn "sport = :18080" | grep -q .; do tries=$((tries+1)); [ $tries -lt 100 ] || exit 3; sleep 0.05; done',
    'curl -sS --max-time 5 http://127.0.0.1:18080/; code=$?',
    'kill $server',
    'exit $code',
  ].join('\n');
  const result = await lab.exec('sb1', ['sh', '-c', script]);
  expect(result.code).toBe(0);
  expect(result.stdout).toContain('local');
  const after = await chainCounters();
  expect(after['127.0.0.0/8']).toBeGreaterThan(before['127.0.0.0/8']!);
  expect(after.redirect).toBe(before.redirect);
});

test('both client ports listen and re-running the NAT-chain script leaves one chain and one jump', async () => {
  const ports = await lab.exec('sb1', ['ss', '-Hltn']);
  expect(ports.stdout).toMatch(/:12345\b/);
  expect(ports.stdout).toMatch(/:1080\b/);
  const rules = async (): Promise<string> => (await lab.exec('sb1', ['iptables', '-w', '-t', 'nat', '-S'])).stdout;
  const before = await rules();
  expect((await lab.exec('sb1', ['/etc/sandbox-kit/nat-chain.sh', 'up'])).code).toBe(0);
  expect(await rules()).toBe(before);
  expect(before.split('\n').filter((l) => l.includes(`-A OUTPUT -p tcp -j ${NAT_CHAIN}`))).toHaveLength(1);
  expect(await whoamiFrom(lab, 'sb1')).toBe(lab.egressEip);
});
