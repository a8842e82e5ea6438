/**
 * The SDK's egress controls on real sandboxes, enforced outside them (probes run as root inside): each option with a
 * destination it refuses and one it lets through; a rule change on a running sandbox; rules that survive a pause and
 * a platform restart; bad rules refused with 400 before anything is made.
 */
import { ROOTFS_TIMEOUT_MS } from '../runtime/helpers/common';
import { INTERNET } from './helpers/internet';
import { startRig, type NetworkRig } from './helpers/rig';

jest.setTimeout(240_000);

let rig: NetworkRig;
beforeAll(async () => {
  rig = await startRig();
}, ROOTFS_TIMEOUT_MS);
afterAll(async () => rig?.close());

async function reach(sandboxID: string, ip: string): Promise<boolean> {
  const r = await rig.sh(sandboxID, `timeout 2 bash -c 'exec 3<>/dev/tcp/${ip}/80' && echo open || echo closed`);
  return r.stdout.trim() === 'open';
}

test('allowInternetAccess: false: nothing leaves, the SDK still drives the sandbox; the default sandbox gets out', async () => {
  const open = await rig.sdk.create('base', rig.opts);
  const closed = await rig.sdk.create('base', { ...rig.opts, allowInternetAccess: false });
  expect(await reach(open.sandboxId, INTERNET.web)).toBe(true);
  expect(await reach(closed.sandboxId, INTERNET.web)).toBe(false);
  expect(await reach(closed.sandboxId, INTERNET.web2)).toBe(false);
  expect((await rig.sdk.call<{ stdout: string }>(closed.sandboxId, 'commands.run', 'echo still-here')).stdout).toBe('still-here\n');
  expect(await rig.sdk.call(closed.sandboxId, 'getInfo')).toMatchObject({ allowInternetAccess: false });
  for (const s of [open, closed]) await rig.sdk.call(s.sandboxId, 'kill');
});

test('denyOut refuses what it names and nothing else; allowOut wins over denyOut but never opens private space', async () => {
  const denied = await rig.sdk.create('base', { ...rig.opts, network: { denyOut: [INTERNET.web] } });
  expect(await reach(denied.sandboxId, INTERNET.web)).toBe(false);
  expect(await reach(denied.sandboxId, INTERNET.web2)).toBe(true);
  const only = await rig.sdk.create('base', {
    ...rig.opts,
    network: { denyOut: ['0.0.0.0/0'], allowOut: [`${INTERNET.web2}/32`, INTERNET.privateService] },
  });
  expect(await reach(only.sandboxId, INTERNET.web2)).toBe(true);
  expect(await reach(only.sandboxId, INTERNET.web)).toBe(false);
  expect(await reach(only.sandboxId, INTERNET.privateService)).toBe(false);
  const info = await rig.sdk.call<{ network: { allowOut: string[]; denyOut: string[] } }>(only.sandboxId, 'getInfo');
  expect(info.network).toMatchObject({ allowOut: ['203.0.113.2/32', '10.77.0.1/32'], denyOut: ['0.0.0.0/0'] });
  for (const s of [denied, only]) await rig.sdk.call(s.sandboxId, 'kill');
});

test('updateNetwork changes the rules of a running sandbox; they survive a pause and a platform restart', async () => {
  const s = await rig.sdk.create('base', rig.opts);
  expect(await reach(s.sandboxId, INTERNET.web)).toBe(true);
  await rig.sdk.call(s.sandboxId, 'updateNetwork', { denyOut: [INTERNET.web] });
  expect(await reach(s.sandboxId, INTERNET.web)).toBe(false);
  expect(await reach(s.sandboxId, INTERNET.web2)).toBe(true);

  expect(await rig.sdk.call(s.sandboxId, 'pause')).toBe(true);
  await rig.sdk.connect(s.sandboxId, rig.opts);
  expect(await reach(s.sandboxId, INTERNET.web)).toBe(false);

  await rig.restart();
  await rig.sdk.connect(s.sandboxId, rig.opts);
  expect(await reach(s.sandboxId, INTERNET.web)).toBe(false);
  expect(await reach(s.sandboxId, INTERNET.web2)).toBe(true);

  // The update replaces the whole configuration: leaving the lists out clears them.
  await rig.sdk.call(s.sandboxId, 'updateNetwork', {});
  expect(await reach(s.sandboxId, INTERNET.web)).toBe(true);
  await rig.sdk.call(s.sandboxId, 'updateNetwork', { allowInternetAccess: false });
  expect(await reach(s.sandboxId, INTERNET.web2)).toBe(false);
  await rig.sdk.call(s.sandboxId, 'kill');
});

test('bad rules get 400 naming the field, and nothing is made', async () => {
  const before = (await rig.platform.sandboxes.all()).length;
  const create = async (body: Record<string, unknown>) => {
    const res = await fetch(`${rig.opts.apiUrl}/v2/sandboxes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': rig.opts.apiKey },
      body: JSON.stringify({ templateID: 'base', ...body }),
    });
    return { status: res.status, message: ((await res.json()) as { message: string }).message };
  };
  const cidr = await create({ network: { denyOut: ['10.0.0.0/33'] } });
  expect(cidr.status).toBe(400);
  expect(cidr.message).toContain('"network.denyOut.0"');
  const key = await create({ network: { denyOutt: ['0.0.0.0/0'] } });
  expect(key.status).toBe(400);
  expect(key.message).toContain('denyOutt');
  await expect(rig.sdk.create('base', { ...rig.opts, network: { denyOut: ['example.com'] } })).rejects.toThrow(/deny rules/);
  // A transform rule that would reframe the request is refused by name (docs/secrets.md has the rest).
  const bad = { 'api.skn.test': [{ transform: { headers: { Host: 'elsewhere.test' } } }] };
  await expect(rig.sdk.create('base', { ...rig.opts, network: { allowOut: ['api.skn.test'], rules: bad } })).rejects.toThrow(
    /"network\.rules\.api\.skn\.test\.0\.transform\.headers\.Host": Host frames the request/,
  );
  // A sandbox created without rules does not trust an egress CA: rules set later are refused, saying why.
  const rules = { 'api.skn.test': [{ transform: { headers: { Authorization: 'Bearer placeholder' } } }] };
  expect((await rig.platform.sandboxes.all()).length).toBe(before);
  const s = await rig.sdk.create('base', rig.opts);
  await expect(rig.sdk.call(s.sandboxId, 'updateNetwork', { allowOut: ['not-an-address!'] })).rejects.toThrow(/allowOut\.0/);
  await expect(rig.sdk.call(s.sandboxId, 'updateNetwork', { allowOut: ['api.skn.test'], rules })).rejects.toThrow(
    /created without network\.rules/,
  );
  expect(await reach(s.sandboxId, INTERNET.web)).toBe(true);
  await rig.sdk.call(s.sandboxId, 'kill');
});
