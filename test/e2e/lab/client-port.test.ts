/**
 * A stack whose sandbox client listens on another port than the default 1080: the rendered start script waits on
 * that port, and everything else the lab does with the client (its egress check, the handle another process attaches
 * to, the commands it suggests) must use the same port.
 */
import { attachLab, type Lab, labUp } from '../../../src/lab';
import { loadStackConfig } from '../../../src/config';
import { namespacesOf, recorder, requireBuilt, uniqueLabName, whoamiFrom } from '../../helpers/lab';

const PORT = 1081;
const name = uniqueLabName('port');
const progress = recorder();
let lab: Lab;

beforeAll(async () => {
  requireBuilt();
  lab = await labUp({ name, mode: 'local', config: loadStackConfig({ client: { localPort: PORT } }), onProgress: progress.onProgress });
});

afterAll(async () => {
  await lab?.down();
  expect(await namespacesOf(name)).toEqual([]);
});

test('the lab comes up and its own egress check passes through the configured port', async () => {
  expect(lab.socksPort).toBe(PORT);
  const check = await lab.egressCheck();
  expect(check).toMatchObject({ ok: true, proxied: lab.egressEip });
  expect(
    progress.events
      .filter((e) => e.step === 'sandbox')
      .map((e) => e.message)
      .join('\n'),
  ).toContain(`ss-local on ${PORT}`);
});

test('the client listens on the configured port and not on 1080', async () => {
  expect(await whoamiFrom(lab, 'sb1', `127.0.0.1:${PORT}`)).toBe(lab.egressEip);
  const listeners = (await lab.exec('sb1', ['ss', '-Hltn'])).stdout;
  expect(listeners).toMatch(new RegExp(`:${PORT}\\b`));
  expect(listeners).not.toMatch(/:1080\b/);
});

test('another process attaching to the lab gets the config it was started with', async () => {
  const attached = attachLab(name);
  expect(attached.socksPort).toBe(PORT);
  expect(attached.config.client.localPort).toBe(PORT);
  expect((await attached.egressCheck()).ok).toBe(true);
});
