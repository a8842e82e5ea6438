import { spawnSync } from 'node:child_process';
import { joinArgv, parkedPeerName } from '../../../src/runtime/network/join-link';

const facts = { bridgeNamespace: 'b', peer: 'wabc', netns: 'n', addressWithPrefix: '10.0.0.2/24', gateway: '10.0.0.1' };

/** Runs the hook as a runtime would, `state` on stdin; every case here is refused before any `ip` runs. */
function hook(state: string): { status: number | null; stderr: string } {
  const [program, ...args] = joinArgv(facts);
  const r = spawnSync(program!, args, { input: state, encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr };
}

describe('the network join hook (join-link.ts)', () => {
  test('refuses a state without a container pid, or with pid 0 or 1, naming it', () => {
    for (const state of ['{"ociVersion":"1.0.2","id":"x","status":"creating"}', '{"ociVersion":"1.0.2","pid":1}', '{"pid": 0}', '']) {
      expect(hook(state)).toEqual({ status: 1, stderr: 'network join: no container pid in its state\n' });
    }
  });

  test("refuses a pid in the runtime's own network namespace (the link would land on the host), multi-line state too", () => {
    const state = `{\n  "ociVersion": "1.0.2",\n  "id": "x",\n  "pid": ${process.pid},\n  "status": "creating"\n}\n`;
    expect(hook(state)).toEqual({ status: 1, stderr: `network join: process ${process.pid} is in the runtime's own network namespace\n` });
  });

  test('parked names fit a link name and differ per namespace', () => {
    expect(parkedPeerName('sk-abc')).toMatch(/^w[0-9a-f]{12}$/);
    expect(parkedPeerName('sk-abc')).not.toBe(parkedPeerName('sk-abd'));
  });
});
