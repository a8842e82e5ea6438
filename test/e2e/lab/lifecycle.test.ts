/**
 * The lab's life cycle through the CLI and the API: `lab up` returns and leaves the lab running, other processes
 * find it, `lab down` removes everything, `up` removes a crashed run's leftovers first, bad input is refused.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { attachLab, findLeftovers, labUp, namespaceName, type Lab } from '../../../src/lab';
import { labDir } from '../../../src/lab/names';
import { isAlive, must, run, spawnDetached } from '../../../src/lab/run';
import { cli, namespacesOf, recorder, requireBuilt, uniqueLabName } from '../../helpers/lab';
import { CLI } from '../../helpers/cli';

beforeAll(() => requireBuilt());

describe('CLI', () => {
  const name = uniqueLabName('cli');

  afterAll(async () => {
    await cli(['lab', 'down', '--name', name]);
    expect(await namespacesOf(name)).toEqual([]);
  });

  test('lab up --json returns with the lab running; status, exec and down work from other processes', async () => {
    const up = await cli(['lab', 'up', '--name', name, '--json']);
    expect(up.code).toBe(0);
    const summary = JSON.parse(up.stdout) as {
      name: string;
      healthy: boolean;
      egressCheck: { direct: string; proxied: string; ok: boolean };
      proxy: { egressEip: string };
    };
    expect(summary.name).toBe(name);
    expect(summary.healthy).toBe(true);
    expect(summary.egressCheck.ok).toBe(true);
    expect(summary.egressCheck.proxied).toBe(summary.proxy.egressEip);
    expect(summary.egressCheck.direct).not.toBe(summary.egressCheck.proxied);
    // Progress went to stderr, step by step.
    expect(up.stderr).toMatch(/\[topology\] namespace sk-/);
    expect(up.stderr).toMatch(/\[check\] through the proxy/);

    const status = await cli(['lab', 'status', '--name', name, '--json']);
    expect(status.code).toBe(0);
    const s = JSON.parse(status.stdout) as { processes: { alive: boolean }[]; server: { state: string } };
    expect(s.processes.length).toBeGreaterThan(0);
    expect(s.processes.every((p) => p.alive)).toBe(true);
    expect(s.server.state).toBe('running');

    // What the internet sees from sb1 through the proxy.
    const whoamiThroughProxy = [
      'lab',
      'exec',
      '--name',
      name,
      'sb1',
      '--',
      'curl',
      '-sS',
      '--max-time',
      '5',
      '--socks5-hostname',
      '127.0.0.1:1080',
      'http://203.0.113.1/',
    ];
    const exec = await cli(whoamiThroughProxy);
    expect(exec.code).toBe(0);
    expect(exec.stdout.trim()).toBe(summary.proxy.egressEip);
    const failing = await cli(['lab', 'exec', '--name', name, 'sb1', '--', 'sh', '-c', 'exit 7']);
    expect(failing.code).toBe(7);

    const repoint = await cli(['lab', 'repoint-egress', '--name', name, '--json']);
    expect(repoint.code).toBe(0);
    const moved = JSON.parse(repoint.stdout) as { from: string; to: string };
    expect(moved.from).toBe(summary.proxy.egressEip);
    const after = await cli(whoamiThroughProxy);
    expect(after.stdout.trim()).toBe(moved.to);

    const pids = s.processes.map((p) => (p as unknown as { pid: number }).pid);
    const down = await cli(['lab', 'down', '--name', name]);
    expect(down.code).toBe(0);
    expect(await namespacesOf(name)).toEqual([]);
    expect(existsSync(labDir(name))).toBe(false);
    expect(pids.filter(isAlive)).toEqual([]);
    const gone = await cli(['lab', 'status', '--name', name]);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toMatch(/no lab named/);
  });

  test('bad input is a usage error (exit 2) naming each bad flag and what is accepted', async () => {
    const both = await cli(['lab', 'up', '--name', 'Bad_Name', '--mode', 'bogus']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--name: got "Bad_Name"; expected 1 to 8 lower-case letters or digits, starting with a letter');
    expect(both.stderr).toContain('--mode: got "bogus"; expected one of local, transparent');
    const noCommand = await cli(['lab', 'exec', '--name', name, 'sb1']);
    expect(noCommand.code).toBe(2);
    expect(noCommand.stderr).toMatch(/NODE -- COMMAND/);
    const sub = await cli(['lab', 'sideways']);
    expect(sub.code).toBe(2);
    expect(await namespacesOf(name)).toEqual([]);
  });
});

describe('leftovers of a crashed run', () => {
  const name = uniqueLabName('crs');
  let lab: Lab | undefined;

  afterAll(async () => {
    await lab?.down();
    expect(await namespacesOf(name)).toEqual([]);
  });

  test('up finds namespaces, processes and state of an earlier run by name, removes them, then builds', async () => {
    // What a run killed halfway leaves: a namespace with a process in it, a half-written state directory.
    const stale = namespaceName(name, 'proxy');
    await must(['ip', 'netns', 'add', stale]);
    mkdirSync(labDir(name), { recursive: true });
    writeFileSync(`${labDir(name)}/state.json`, '{"version":1,"na');
    const sleeper = spawnDetached(['ip', 'netns', 'exec', stale, 'sleep', '300'], '/dev/null');
    expect((await findLeftovers(name)).namespaces).toEqual([stale]);

    const progress = recorder();
    lab = await labUp({ name, onProgress: progress.onProgress });
    expect(progress.events[0]!.step).toBe('cleanup');
    expect(progress.events[0]!.message).toMatch(/1 namespaces/);
    expect(isAlive(sleeper)).toBe(false);
    expect((await lab.status()).healthy).toBe(true);
    // Another process (here: a second handle) finds the same lab through its state file.
    expect(attachLab(name).egressEip).toBe(lab.egressEip);
  });

  test('a `lab up` killed halfway leaves nothing the next up cannot remove', async () => {
    const crashed = uniqueLabName('kil');
    const child = spawn(process.execPath, [CLI, 'lab', 'up', '--name', crashed], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    // Kill it once the proxy host is half built: namespaces, services and a running ss-server exist by then.
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        output += d.toString();
        if (output.includes('ss-server running under the supervisor')) {
          child.kill('SIGKILL');
          resolve();
        }
      });
      child.on('exit', () => reject(new Error(`lab up ended before it could be killed:\n${output}`)));
    });
    await new Promise((r) => child.on('close', r));
    const left = await findLeftovers(crashed);
    expect(left.namespaces.length).toBeGreaterThan(0);
    const progress = recorder();
    const again = await labUp({ name: crashed, onProgress: progress.onProgress });
    try {
      expect(progress.events[0]!.step).toBe('cleanup');
      expect((await again.status()).healthy).toBe(true);
    } finally {
      await again.down();
    }
    expect(await namespacesOf(crashed)).toEqual([]);
  });

  test('a leftover of another lab name is not touched', async () => {
    const other = uniqueLabName('oth');
    const ns = namespaceName(other, 'inet');
    await must(['ip', 'netns', 'add', ns]);
    try {
      const again = await labUp({ name });
      lab = again;
      expect(await namespacesOf(other)).toEqual([ns]);
    } finally {
      await run(['ip', 'netns', 'delete', ns]);
    }
  });
});
