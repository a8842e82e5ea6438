/**
 * An error answered on the agent's fast path does not load node's fetch implementation (undici, about 7 MiB of RSS):
 * a Stat of a missing file is what the SDK's `files.exists()` sends, so nearly every sandbox answers one. A call
 * through the Connect router (which builds Headers for every request) does load it: the check sees the difference.
 */
import * as os from 'node:os';
import { rawCall, startHostAgent, type AgentProcess } from './helpers/common';

jest.setTimeout(30_000);

let agent: AgentProcess | undefined;

afterEach(async () => {
  await agent?.stop();
  agent = undefined;
});

/** Whether the agent's process has loaded undici so far (it answers SIGUSR2 with a line on stdout). */
function loadedFetch(a: AgentProcess): Promise<boolean> {
  return new Promise((resolve) => {
    const onData = (d: Buffer) => {
      const m = /fetch loaded: (true|false)/.exec(d.toString());
      if (!m) return;
      a.child.stdout!.off('data', onData);
      resolve(m[1] === 'true');
    };
    a.child.stdout!.on('data', onData);
    a.child.kill('SIGUSR2');
  });
}

test("a fast-path error loads no fetch implementation; the router's first call does", async () => {
  const probe = "process.on('SIGUSR2', () => console.log('fetch loaded: ' + process.moduleLoadList.some((m) => m.includes('undici'))));";
  agent = await startHostAgent({ defaultUser: os.userInfo().username }, undefined, probe);
  const base = `http://127.0.0.1:${agent.port}`;
  expect(await loadedFetch(agent)).toBe(false);
  const missing = await rawCall(base, 'Stat', JSON.stringify({ path: '/no/such/file' }));
  expect([missing.status, missing.json?.code]).toEqual([404, 'not_found']);
  const bad = await rawCall(base, 'ListDir', JSON.stringify({ path: '/', depth: 'x' }));
  expect([bad.status, bad.json?.code]).toEqual([400, 'invalid_argument']);
  expect(await loadedFetch(agent)).toBe(false);
  // MakeDir goes through the router: its error is answered by the library, from the same AgentError.
  const exists = await rawCall(base, 'MakeDir', JSON.stringify({ path: '/' }));
  expect([exists.status, exists.json?.code]).toEqual([409, 'already_exists']);
  expect(await loadedFetch(agent)).toBe(true);
});
