/**
 * What an agent's first calls load. Node's fetch implementation (undici, about 7 MiB of RSS) is loaded by the first
 * Headers a process makes: an error answered on the fast path makes none (a Stat of a missing file is what the SDK's
 * `files.exists()` sends, so nearly every sandbox answers one), a call through the Connect router does. node:crypto
 * (about 12 ms of a sandbox's start) is not needed to check the access token, at start, at /init or on a call; a
 * signed /files URL, whose signature is a SHA-256, loads it. Each check is shown to see the difference.
 */
import * as os from 'node:os';
import { rawCall, startHostAgent, type AgentProcess } from './helpers/common';

jest.setTimeout(30_000);

let agent: AgentProcess | undefined;

afterEach(async () => {
  await agent?.stop();
  agent = undefined;
});

/** The agent answers SIGUSR2 with the node modules it has loaded so far, as one line on stdout. */
const PROBE = "process.on('SIGUSR2', () => console.log('loaded: ' + JSON.stringify(process.moduleLoadList)));";

function loaded(a: AgentProcess): Promise<string[]> {
  return new Promise((resolve) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /loaded: (\[.*\])\n/.exec(out);
      if (!m) return;
      a.child.stdout!.off('data', onData);
      resolve(JSON.parse(m[1]!) as string[]);
    };
    a.child.stdout!.on('data', onData);
    a.child.kill('SIGUSR2');
  });
}

const hasFetch = async (a: AgentProcess) => (await loaded(a)).some((m) => m.includes('undici'));
const hasCrypto = async (a: AgentProcess) => (await loaded(a)).includes('NativeModule crypto');

test("a fast-path error loads no fetch implementation; the router's first call does", async () => {
  agent = await startHostAgent({ defaultUser: os.userInfo().username }, undefined, PROBE);
  const base = `http://127.0.0.1:${agent.port}`;
  expect(await hasFetch(agent)).toBe(false);
  const missing = await rawCall(base, 'Stat', JSON.stringify({ path: '/no/such/file' }));
  expect([missing.status, missing.json?.code]).toEqual([404, 'not_found']);
  const bad = await rawCall(base, 'ListDir', JSON.stringify({ path: '/', depth: 'x' }));
  expect([bad.status, bad.json?.code]).toEqual([400, 'invalid_argument']);
  expect(await hasFetch(agent)).toBe(false);
  // MakeDir goes through the router: its error is answered by the library, from the same AgentError.
  const exists = await rawCall(base, 'MakeDir', JSON.stringify({ path: '/' }));
  expect([exists.status, exists.json?.code]).toEqual([409, 'already_exists']);
  expect(await hasFetch(agent)).toBe(true);
});

test('the access token is checked without node:crypto, at start, at /init and on calls; a signed /files URL loads it', async () => {
  agent = await startHostAgent({ defaultUser: os.userInfo().username, accessToken: 'sbx1.first-token' }, undefined, PROBE);
  const base = `http://127.0.0.1:${agent.port}`;
  expect(await hasCrypto(agent)).toBe(false);
  const init = (token: string, headers: Record<string, string>) =>
    fetch(`${base}/init`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ accessToken: token }),
    });
  // The token is checked, both ways: the wrong one is refused, the right one replaces it.
  expect((await init('sbx1.second-token', { 'x-access-token': 'sbx1.first-tokeN' })).status).toBe(401);
  expect((await init('sbx1.second-token', { 'x-access-token': 'sbx1.first-token' })).status).toBe(204);
  const refused = await rawCall(base, 'Stat', JSON.stringify({ path: '/' }), { 'x-access-token': 'sbx1.first-token' });
  expect([refused.status, refused.json?.code]).toEqual([401, 'unauthenticated']);
  const stat = await rawCall(base, 'Stat', JSON.stringify({ path: '/' }), { 'x-access-token': 'sbx1.second-token' });
  expect(stat.status).toBe(200);
  expect(await hasCrypto(agent)).toBe(false);
  // A signed URL's signature is checked by its SHA-256 (a wrong one here: refused, and node:crypto is loaded).
  const signed = await fetch(`${base}/files?path=/etc/hostname&signature=v1_wrong`);
  expect(signed.status).toBe(401);
  expect(await hasCrypto(agent)).toBe(true);
});
