/**
 * The security suite's attack table against the system a user evaluates first: `sandbox-kit up` (proxy host, platform,
 * gateway, sandbox network), with sandboxes made by the unmodified E2B SDK through its API. Hostile code as root in a
 * sandbox tries to be host root, reach the host's services and the metadata address, reach or impersonate another
 * sandbox, read the agent token off another port, and leave by another address than the stack's egress; beside
 * each, the legitimate use of the same path works. The system has the lab's host link, one per machine: npm test
 * runs the e2e files one at a time.
 */
import * as path from 'node:path';
import type { UpJson } from '../../../src/local';
import { ADDRESS_PLAN } from '../../../src/lab/address-plan';
import { cli, namespacesOf, requireBuilt, uniqueLabName } from '../../helpers/lab';
import { runEntry } from '../../helpers/node-script';

jest.setTimeout(900_000);

interface Ran {
  exitCode: number;
  stdout: string;
  stderr: string;
}
interface Answer {
  ok: boolean;
  message?: string;
  probes: Record<string, Ran>;
  addressA: string;
  addressB: string;
  readFromB: string;
  echoStatus: number;
  echoBody: string;
}

const name = uniqueLabName('atk');
let info: UpJson;
let answer: Answer;

beforeAll(async () => {
  requireBuilt();
  const up = await cli(['up', '--name', name, '--gateway-port', '0', '--sandboxes', '1', '--no-templates', '--json'], 600_000);
  if (up.code !== 0) throw new Error(`up failed (${up.code}): ${up.stderr.slice(-3000)}`);
  info = JSON.parse(up.stdout) as UpJson;
  const run = await runEntry(path.join(__dirname, 'helpers', 'attack-child.ts'), {
    args: [
      JSON.stringify({
        opts: { apiKey: info.apiKey, apiUrl: info.apiUrl, sandboxUrl: info.sandboxUrl },
        proxyTemplate: info.template.alias,
        mode: info.proxy.mode,
        plan: { web: ADDRESS_PLAN.web, metadata: ADDRESS_PLAN.metadata, sandboxHostPublic: ADDRESS_PLAN.sandboxHostPublic },
      }),
    ],
    timeoutMs: 600_000,
  });
  const line = run.stdout.find((l) => l.startsWith('{'));
  if (line === undefined) throw new Error(`the SDK child printed nothing (exit ${run.code}): ${run.stderr}`);
  answer = JSON.parse(line) as Answer;
  if (!answer.ok) throw new Error(`the SDK child failed: ${answer.message}`);
}, 1_200_000);

afterAll(async () => {
  await cli(['down', '--name', name, '--purge'], 120_000);
  expect(await namespacesOf(name)).toEqual([]);
});

const probe = (key: string): Ran => {
  const found = answer.probes[key];
  if (!found) throw new Error(`no probe ${key}`);
  return found;
};

test('root in a sandbox is an unprivileged host id, under a seccomp filter, with no nested user namespace', () => {
  const [inside, outside] = probe('uidMap').stdout.trim().split(/\s+/).map(Number);
  expect(inside).toBe(0);
  expect(outside).toBeGreaterThan(0);
  expect(probe('seccomp').stdout.trim()).toBe('Seccomp:\t2');
  expect(probe('nestedUserns').exitCode).not.toBe(0);
  // The legitimate use: root inside is root to the sandbox's own files.
  expect(probe('legitRun')).toMatchObject({ exitCode: 0, stdout: '0\nok\n' });
});

test("the metadata address, the platform API and the gateway are out of a sandbox's reach", () => {
  for (const key of ['metadata', 'apiByGateway', 'gatewayByRoute']) expect([key, probe(key).exitCode]).not.toEqual([key, 0]);
});

test("a sandbox reaches neither another sandbox's agent nor its calls: a stolen address catches nothing", () => {
  expect(answer.addressA).not.toBe(answer.addressB);
  expect(probe('otherAgent').stdout).not.toBe('204');
  expect(probe('otherAgent').exitCode).not.toBe(0);
  // A added B's address and announced it; the SDK's next call for B still reached B.
  expect(probe('stealAddress').stdout).toContain('announced');
  expect(answer.readFromB).toBe('B');
});

test("a port other than the agent's gets the caller's request without the access token", () => {
  expect(probe('headerEcho').exitCode).toBe(0);
  expect(answer.echoStatus).toBe(200);
  const headers = JSON.parse(answer.echoBody) as Record<string, string>;
  expect(headers).not.toHaveProperty('x-access-token');
  expect(answer.echoBody).not.toContain('token-sent-by-the-client');
  // The legitimate use: the same server answers on the sandbox's own loopback.
  expect(probe('legitLoopback').stdout).toBe('200');
});

test("the proxy template's sandbox leaves by the stack's egress address; root flushing its NAT chain gets no other way out", () => {
  expect(probe('proxied')).toMatchObject({ exitCode: 0 });
  expect(probe('proxied').stdout.trim()).toBe(info.proxy.egressIp);
  const bypass = probe('bypass');
  expect(bypass.stdout).not.toContain(ADDRESS_PLAN.sandboxHostPublic);
  if (bypass.exitCode === 0) expect(bypass.stdout.trim()).toBe(info.proxy.egressIp);
});
