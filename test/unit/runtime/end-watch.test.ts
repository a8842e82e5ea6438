import { spawn } from 'node:child_process';
import { EndWatch, oomKillCount } from '../../../src/runtime/end-watch';
import { waitFor } from '../../../src/util/poll';

describe('oomKillCount', () => {
  test('cgroup v1 memory.oom_control and v2 memory.events', () => {
    expect(oomKillCount('oom_kill_disable 0\nunder_oom 0\noom_kill 1\n')).toBe(1);
    expect(oomKillCount('low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n')).toBe(2);
    expect(oomKillCount('oom_kill_disable 0\nunder_oom 0\n')).toBe(0);
  });
});

describe('EndWatch', () => {
  /** A process that lives until `end()`; the reset finds no connection to documentation addresses, the cgroup is none. */
  const sleeper = () => {
    const child = spawn('sleep', ['60'], { stdio: 'ignore' });
    return { pid: child.pid!, end: () => new Promise((r) => child.once('exit', r).kill('SIGKILL')) };
  };

  test('reports a watched process that ends by itself, once, and not one unwatched first', async () => {
    const watch = new EndWatch(10);
    const ended: string[] = [];
    watch.onEnded((id, why) => void ended.push(`${id} ${why}`));
    const [a, b] = [sleeper(), sleeper()];
    watch.watch('a', a.pid, '192.0.2.1', 'sandbox-kit-unit/none');
    watch.watch('b', b.pid, '192.0.2.2', 'sandbox-kit-unit/none');
    await new Promise((r) => setTimeout(r, 50));
    expect(ended).toEqual([]);
    expect(watch.unwatch('b')).toBe('192.0.2.2');
    await Promise.all([a.end(), b.end()]);
    await waitFor('the end to be reported', () => (ended.length > 0 ? true : undefined), { timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 50));
    expect(ended).toEqual(['a its processes ended']);
  });

  test('a process already gone when the watch begins (found again after a restart) is reported as ended', async () => {
    const watch = new EndWatch(10);
    const ended: string[] = [];
    watch.onEnded((id) => void ended.push(id));
    const gone = sleeper();
    await gone.end();
    watch.watch('gone', gone.pid, '192.0.2.3', 'sandbox-kit-unit/none');
    watch.watch('no-pid', 0, '192.0.2.4', 'sandbox-kit-unit/none');
    await waitFor('both to be reported', () => (ended.length === 2 ? true : undefined), { timeoutMs: 10_000 });
    expect(ended.sort()).toEqual(['gone', 'no-pid']);
  });

  test('the address stays for the kill of a listener that takes its time, and is let go by the watch when nobody kills', async () => {
    const watch = new EndWatch(10);
    const seen: Array<string | undefined> = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    // 'killed': the listener removes the sandbox (its kill asks for the address to reset); 'pooled': it does not.
    watch.onEnded(async (id) => {
      await held;
      if (id === 'killed') seen.push(watch.unwatch(id));
    });
    const [killed, pooled] = [sleeper(), sleeper()];
    watch.watch('killed', killed.pid, '192.0.2.5', 'sandbox-kit-unit/none');
    watch.watch('pooled', pooled.pid, '192.0.2.6', 'sandbox-kit-unit/none');
    await Promise.all([killed.end(), pooled.end()]);
    // Reported, and while the listener runs nothing let the addresses go: not reported twice either.
    await new Promise((r) => setTimeout(r, 100));
    release();
    await waitFor('the killed one to be unwatched', () => (seen.length > 0 ? true : undefined), { timeoutMs: 10_000 });
    expect(seen).toEqual(['192.0.2.5']);
    // The one nobody killed: the watch reset its connections itself and let it go.
    await new Promise((r) => setTimeout(r, 50));
    expect(watch.unwatch('pooled')).toBeUndefined();
  });
});
