/** The lab's address plan, names and EIP NAT rules (pure; no namespaces needed). */
import { ADDRESS_PLAN, checkElasticIp, nextElasticIp, sandboxAddress } from '../../../src/lab/address-plan';
import { eipJumpRules, eipRestoreScript } from '../../../src/lab/eip-nat';
import { checkLabName, hostLinkName, namespaceName } from '../../../src/lab/names';
import { inNamespace } from '../../../src/lab/run';

const inRange = (a: string, prefix: string): boolean => a.startsWith(prefix);

test('inside addresses are in 198.18.0.0/15, public ones in 203.0.113.0/24', () => {
  const p = ADDRESS_PLAN;
  for (const a of [
    p.edgePrivate,
    p.proxyPrimary,
    p.proxyEgress,
    p.sandboxGateway,
    p.hostLinkRoot,
    p.hostLinkLab,
    sandboxAddress(1),
    sandboxAddress(200),
  ]) {
    expect(inRange(a, '198.18.') || inRange(a, '198.19.')).toBe(true);
  }
  for (const a of [p.edgePublic, p.web, p.sandboxHostPublic, p.ingressEip, p.egressEip]) expect(inRange(a, '203.0.113.')).toBe(true);
  const all = [p.edgePublic, p.web, p.sandboxHostPublic, p.ingressEip, p.egressEip];
  expect(new Set(all).size).toBe(all.length);
});

test('sandbox addresses and Elastic IP choices', () => {
  expect(sandboxAddress(1)).toBe('198.18.2.11');
  expect(() => sandboxAddress(0)).toThrow(/out of range/);
  expect(() => sandboxAddress(201)).toThrow(/out of range/);
  expect(nextElasticIp('203.0.113.20')).toBe('203.0.113.21');
  // Skips addresses the plan uses, wraps around the /24.
  expect(nextElasticIp('203.0.113.99')).toBe('203.0.113.101');
  expect(nextElasticIp('203.0.113.253')).toBe('203.0.113.2');
  expect(() => checkElasticIp('10.0.0.1')).toThrow(/203\.0\.113\.1-203\.0\.113\.254/);
  expect(() => checkElasticIp('203.0.113.0')).toThrow(/expected an address/);
  expect(() => checkElasticIp(ADDRESS_PLAN.web)).toThrow(/already used/);
});

test('EIP NAT: one DNAT and one SNAT per mapping, chains replaced as a whole', () => {
  const script = eipRestoreScript([
    { publicAddress: '203.0.113.10', privateAddress: '198.18.1.10' },
    { publicAddress: '203.0.113.21', privateAddress: '198.18.1.11' },
  ]);
  const lines = script.trim().split('\n');
  expect(lines[0]).toBe('*nat');
  expect(lines.at(-1)).toBe('COMMIT');
  expect(lines).toContain('-A SK_EIP_IN -d 203.0.113.21/32 -j DNAT --to-destination 198.18.1.11');
  expect(lines).toContain('-A SK_EIP_OUT -s 198.18.1.11/32 -j SNAT --to-source 203.0.113.21');
  expect(lines.filter((l) => l.startsWith('-A'))).toHaveLength(4);
  expect(lines.filter((l) => l.startsWith(':'))).toEqual([':SK_EIP_IN - [0:0]', ':SK_EIP_OUT - [0:0]']);
  expect(() =>
    eipRestoreScript([
      { publicAddress: '203.0.113.10', privateAddress: '198.18.1.10' },
      { publicAddress: '203.0.113.10', privateAddress: '198.18.1.11' },
    ]),
  ).toThrow(/mapped twice/);
  expect(eipJumpRules().map((r) => r.join(' '))).toEqual(['-t nat -A PREROUTING -j SK_EIP_IN', '-t nat -A POSTROUTING -j SK_EIP_OUT']);
});

test('names: prefix per lab, root-namespace link within 15 characters, bad names refused', () => {
  expect(namespaceName('lab', 'proxy')).toBe('sk-lab-proxy');
  expect(hostLinkName('abcdefgh').length).toBeLessThanOrEqual(15);
  for (const bad of ['', 'Lab', '1lab', 'toolongname', 'a-b', 'a/b']) expect(() => checkLabName(bad)).toThrow(/invalid lab name/);
  expect(checkLabName('lab2')).toBe('lab2');
});

test('commands with an /etc layer mount it over /etc before running', () => {
  expect(inNamespace('sk-lab-sb1', ['true'])).toEqual(['ip', 'netns', 'exec', 'sk-lab-sb1', 'true']);
  const argv = inNamespace('sk-lab-sb1', ['cat', '/etc/x'], '/run/l/etc/sb1');
  expect(argv.slice(0, 6)).toEqual(['ip', 'netns', 'exec', 'sk-lab-sb1', 'sh', '-c']);
  expect(argv[6]).toContain('mount -t overlay');
  expect(argv.slice(7)).toEqual(['/run/l/etc/sb1', 'cat', '/etc/x']);
  expect(() => inNamespace('ns', ['true'], '/a:b')).toThrow(/must not contain/);
});
