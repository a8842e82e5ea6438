/**
 * Template build steps as one-shot crun/runc containers over real layers: live output lines, exit codes, the user
 * and workdir, binds, timeouts, whiteouts of a layer taking effect below the next step, and nothing left mounted.
 * Root only; each step with egress gets network namespaces of its own.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupLeftovers } from '../../../src/runtime/cleanup';
import { createStepExecutor, TIMED_OUT_EXIT_CODE, type OciStepExecutor } from '../../../src/runtime/step-executor';
import type { StepRun } from '../../../src/runtime/types';
import { baseRootfs, instanceCgroups, ROOTFS_TIMEOUT_MS, uniqueName } from './helpers/common';

jest.setTimeout(60_000);

let rootfs: string;
let scratch: string;

beforeAll(async () => {
  rootfs = await baseRootfs();
  scratch = fs.mkdtempSync('/var/tmp/sk-steps-test-');
}, ROOTFS_TIMEOUT_MS);

afterAll(() => {
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

function mountedAnywhere(dir: string): boolean {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .some((d) => {
      try {
        return fs.readFileSync(`/proc/${d}/mountinfo`, 'utf8').includes(dir);
      } catch {
        return false;
      }
    });
}

describe.each(['crun', 'runc'] as const)('%s', (runtimeName) => {
  let instance: string;
  let steps: OciStepExecutor;
  const roots = () => ({ stateRoot: path.join(scratch, 'state'), dataRoot: path.join(scratch, 'data') });
  let n = 0;

  beforeEach(() => {
    instance = uniqueName('s');
    steps = createStepExecutor({ instance, runtime: runtimeName, ...roots() });
  });

  afterEach(async () => {
    expect(instanceCgroups(instance).filter((d) => fs.readdirSync(d).some((e) => e.startsWith('step-')))).toEqual([]);
    await cleanupLeftovers({ instance, ...roots() });
  });

  function newLayer(): string {
    const dir = path.join(scratch, `layer-${runtimeName}-${++n}`);
    fs.mkdirSync(dir);
    return dir;
  }

  function step(layers: string[], layerDir: string, script: string, extra: Partial<StepRun> = {}) {
    const lines: Array<[string, string]> = [];
    const run: StepRun = {
      layers,
      layerDir,
      argv: ['/bin/bash', '-c', script],
      user: 'root',
      workdir: '/',
      env: {},
      network: 'egress',
      memoryMB: 512,
      cpuCount: 1,
      timeoutMs: 30_000,
      onLine: (stream, line) => lines.push([stream, line]),
      ...extra,
    };
    return { lines, done: steps.run(run) };
  }

  test('a step writes its changes into the layer (deletions as whiteouts), streams its lines and leaves nothing mounted', async () => {
    const layer = newLayer();
    const { lines, done } = step(
      [rootfs],
      layer,
      'echo out1; echo err1 >&2; mkdir -p /data && echo kept > /data/f; rm /etc/issue; sleep 300 & echo out2',
    );
    expect(await done).toBe(0);
    expect(lines.filter(([s]) => s === 'stdout')).toEqual([
      ['stdout', 'out1'],
      ['stdout', 'out2'],
    ]);
    expect(lines.filter(([s]) => s === 'stderr')).toEqual([['stderr', 'err1']]);
    expect(fs.readFileSync(path.join(layer, 'data/f'), 'utf8')).toBe('kept\n');
    const whiteout = fs.lstatSync(path.join(layer, 'etc/issue'));
    expect([whiteout.isCharacterDevice(), whiteout.rdev]).toEqual([true, 0]);
    expect(fs.existsSync(path.join(rootfs, 'etc/issue'))).toBe(true);
    expect(mountedAnywhere(layer)).toBe(false);

    // The layer below the next step: the deletion holds, the file is there.
    const next = newLayer();
    const second = step([layer, rootfs], next, 'cat /data/f; test -e /etc/issue && echo issue-present || echo issue-deleted');
    expect(await second.done).toBe(0);
    expect(second.lines).toEqual([
      ['stdout', 'kept'],
      ['stdout', 'issue-deleted'],
    ]);
    expect(fs.readdirSync(next)).toEqual([]);
  });

  test('steps with egress get the build proxy (under their own ENV); a private-network step gets none', async () => {
    const print = 'echo "$(printenv http_proxy || echo unset) $(printenv no_proxy || echo unset)"';
    const seen = async (network: 'egress' | 'none', env: Record<string, string>) => {
      const lines: string[] = [];
      const code = await steps.run({
        layers: [rootfs],
        layerDir: newLayer(),
        argv: ['/bin/bash', '-c', print],
        user: 'root',
        workdir: '/',
        env,
        network,
        memoryMB: 256,
        cpuCount: 1,
        timeoutMs: 20_000,
        onLine: (_s, line) => lines.push(line),
      });
      return { code, lines };
    };
    expect(await seen('egress', {})).toEqual({ code: 0, lines: ['http://127.0.0.1:3128 localhost,127.0.0.1'] });
    expect(await seen('egress', { no_proxy: '*' })).toEqual({ code: 0, lines: ['http://127.0.0.1:3128 *'] });
    expect(await seen('none', {})).toEqual({ code: 0, lines: ['unset unset'] });
  });

  test('lines reach onLine while the step runs', async () => {
    const signal = fs.mkdtempSync(path.join(scratch, 'signal-'));
    fs.chmodSync(signal, 0o755); // the step's root is not the host's: the bind must be readable by others
    const layer = newLayer();
    let release: () => void = () => undefined;
    const firstSeen = new Promise<void>((r) => (release = r));
    const lines: string[] = [];
    const done = steps.run({
      layers: [rootfs],
      layerDir: layer,
      argv: ['/bin/bash', '-c', 'echo first; while [ ! -e /signal/go ]; do sleep 0.05; done; echo second'],
      user: 'root',
      workdir: '/',
      env: {},
      binds: [{ source: signal, target: '/signal' }],
      network: 'egress',
      memoryMB: 256,
      cpuCount: 1,
      timeoutMs: 20_000,
      onLine: (_s, line) => {
        lines.push(line);
        if (line === 'first') release();
      },
    });
    await firstSeen; // only reachable if 'first' arrived before the step could finish
    fs.writeFileSync(path.join(signal, 'go'), '');
    expect(await done).toBe(0);
    expect(lines).toEqual(['first', 'second']);
    expect(fs.existsSync(path.join(layer, 'signal'))).toBe(false); // the bind's mount point is not part of the layer
  });

  test("user, workdir, env, binds; an egress step's network namespace is its own", async () => {
    const ctx = fs.mkdtempSync(path.join(scratch, 'ctx-'));
    fs.chmodSync(ctx, 0o755); // the step's user reads it
    fs.writeFileSync(path.join(ctx, 'hello.txt'), 'from the context\n');
    const layer = newLayer();
    const { lines, done } = step(
      [rootfs],
      layer,
      'id -u; id -g; echo $HOME; pwd; echo $GREETING; cat /ctx/in/hello.txt; readlink /proc/self/ns/net',
      {
        user: 'user',
        workdir: '/home/user',
        env: { GREETING: 'hi there' },
        binds: [{ source: ctx, target: '/ctx/in' }],
      },
    );
    expect(await done).toBe(0);
    expect(lines.map(([, l]) => l)).toEqual([
      '1000',
      '1000',
      '/home/user',
      '/home/user',
      'hi there',
      'from the context',
      expect.stringMatching(/^net:\[\d+\]$/),
    ]);
    expect(lines.at(-1)?.[1]).not.toBe(fs.readlinkSync('/proc/self/ns/net'));
    expect(fs.existsSync(path.join(layer, 'ctx'))).toBe(false);
  });

  test("network 'none': a namespace of the step's own with loopback up; a missing workdir starts in /", async () => {
    const { lines, done } = step(
      [rootfs],
      newLayer(),
      'readlink /proc/self/ns/net; ip -o link show | cut -d" " -f2; ip -o addr show lo | grep -c "inet 127.0.0.1"; pwd',
      {
        network: 'none',
        workdir: '/does/not/exist',
      },
    );
    expect(await done).toBe(0);
    const [ns, ...rest] = lines.map(([, l]) => l);
    expect(ns).not.toBe(fs.readlinkSync('/proc/self/ns/net'));
    expect(rest).toEqual(['lo:', '1', '/']);
  });

  test('the exit code comes back; a step past its timeout is killed (124); bad input is a clear error', async () => {
    expect(await step([rootfs], newLayer(), 'echo failing; exit 3').done).toBe(3);
    const slow = step([rootfs], newLayer(), 'echo started; sleep 60', { timeoutMs: 1500 });
    expect(await slow.done).toBe(TIMED_OUT_EXIT_CODE);
    expect(slow.lines.map(([, l]) => l)).toEqual(['started', 'step timed out after 1.5 s; killed']);
    await expect(step([rootfs], newLayer(), 'true', { user: 'nobody-here' }).done).rejects.toThrow(/user "nobody-here" does not exist/);
    const used = newLayer();
    fs.writeFileSync(path.join(used, 'x'), '');
    await expect(step([rootfs], used, 'true').done).rejects.toThrow(/is not empty/);
  });
});
