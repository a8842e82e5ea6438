/**
 * Egress rules of sandboxes taken from the warm pool (docs/platform.md#warm-pool): a pooled sandbox is networked
 * before any create names its rules, so the take loads the create's rules before the sandbox is handed out. Each
 * option with a destination it refuses and one it lets through, on sandboxes the platform's log says came from the
 * pool; the unmodified SDK drives them (probes run as root inside).
 */
import { waitFor } from '../../../src/util/poll';
import { ROOTFS_TIMEOUT_MS } from '../runtime/helpers/common';
import { INTERNET } from './helpers/internet';
import { startRig, type NetworkRig } from './helpers/rig';

jest.setTimeout(240_000);

const POOL = 2;
let rig: NetworkRig;
beforeAll(async () => {
  rig = await startRig({ warmPool: { base: POOL }, warmPoolCheckMs: 300 }, 'np');
}, ROOTFS_TIMEOUT_MS);
afterAll(async () => rig?.close());

async function reach(sandboxID: string, ip: string): Promise<boolean> {
  const r = await rig.sh(sandboxID, `timeout 2 bash -c 'exec 3<>/dev/tcp/${ip}/80' && echo open || echo closed`);
  return r.stdout.trim() === 'open';
}

/** Waits (bounding only a hang) for a full pool, then creates: the create takes a pooled sandbox. */
async function createPooled(extra: Record<string, unknown>): Promise<string> {
  await waitFor('a full warm pool', () => ((rig.platform.sandboxes.warmPool().base ?? []).length === POOL ? true : undefined), {
    timeoutMs: 120_000,
    intervalMs: 100,
  });
  const s = await rig.sdk.create('base', { ...rig.opts, ...extra });
  const res = await fetch(`${rig.opts.apiUrl}/sandboxes/${s.sandboxId}/logs`, { headers: { 'x-api-key': rig.opts.apiKey } });
  const messages = ((await res.json()) as { logEntries: Array<{ message: string }> }).logEntries.map((e) => e.message);
  expect(messages.find((m) => m.startsWith('sandbox ready in'))).toMatch(/from the warm pool/);
  return s.sandboxId;
}

test("a pooled sandbox gets the create's egress rules before it is handed out; one without rules gets out", async () => {
  const closed = await createPooled({ allowInternetAccess: false });
  expect(await reach(closed, INTERNET.web)).toBe(false);
  expect(await reach(closed, INTERNET.web2)).toBe(false);
  const only = await createPooled({ network: { denyOut: ['0.0.0.0/0'], allowOut: [`${INTERNET.web2}/32`] } });
  expect(await reach(only, INTERNET.web2)).toBe(true);
  expect(await reach(only, INTERNET.web)).toBe(false);
  const denied = await createPooled({ network: { denyOut: [INTERNET.web] } });
  expect(await reach(denied, INTERNET.web)).toBe(false);
  expect(await reach(denied, INTERNET.web2)).toBe(true);
  const open = await createPooled({});
  expect(await reach(open, INTERNET.web)).toBe(true);
  for (const id of [closed, only, denied, open]) await rig.sdk.call(id, 'kill');
});
