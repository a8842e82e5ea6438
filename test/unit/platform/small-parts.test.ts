import { envelope, readEnvelopes } from '../../../src/platform/sandboxes/agent-client';
import { Deadlines } from '../../../src/platform/sandboxes/deadlines';
import { KeyedLock } from '../../../src/platform/sandboxes/keyed-lock';
import { sandboxDetail, listedSandbox } from '../../../src/platform/sandboxes/view';
import type { SandboxRecord } from '../../../src/platform/sandboxes/record';
import { MAX_TIMER_MS } from '../../../src/contract/connect-timeout';

async function collect(chunks: Buffer[]) {
  async function* source() {
    for (const c of chunks) yield c;
  }
  const out: unknown[] = [];
  for await (const e of readEnvelopes(source())) out.push(e);
  return out;
}

describe('Connect envelopes', () => {
  it('reads messages however the stream is cut, end-stream flag included', async () => {
    const bytes = Buffer.concat([envelope(0, { event: { start: { pid: 7 } } }), envelope(2, {})]);
    const cuts = [bytes.subarray(0, 3), bytes.subarray(3, 20), bytes.subarray(20)];
    expect(await collect(cuts)).toEqual([
      { flags: 0, json: { event: { start: { pid: 7 } } } },
      { flags: 2, json: {} },
    ]);
  });

  it('refuses a stream cut inside a message', async () => {
    await expect(collect([envelope(0, { a: 1 }).subarray(0, 8)])).rejects.toThrow('cut inside a message');
  });
});

describe('KeyedLock', () => {
  it('runs work of one key one at a time, other keys alongside', async () => {
    const lock = new KeyedLock();
    const order: string[] = [];
    const slow = (name: string, ms: number) => async () => {
      order.push(`${name}+`);
      await new Promise((r) => setTimeout(r, ms));
      order.push(`${name}-`);
    };
    await Promise.all([lock.run('a', slow('a1', 20)), lock.run('a', slow('a2', 1)), lock.run('b', slow('b1', 5))]);
    expect(order.indexOf('a2+')).toBeGreaterThan(order.indexOf('a1-'));
    expect(order.indexOf('b1+')).toBeLessThan(order.indexOf('a1-'));
  });

  it('goes on after a failure', async () => {
    const lock = new KeyedLock();
    await expect(lock.run('a', async () => Promise.reject(new Error('x')))).rejects.toThrow('x');
    await expect(lock.run('a', async () => 5)).resolves.toBe(5);
  });
});

describe('Deadlines', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('fires at the end time, at once for a past one, and not after clear', () => {
    let now = 1_000;
    const fired: string[] = [];
    const d = new Deadlines(
      (id) => fired.push(id),
      () => now,
    );
    d.arm('a', 1_500);
    d.arm('past', 10);
    d.arm('cleared', 1_200);
    d.clear('cleared');
    jest.advanceTimersByTime(0);
    expect(fired).toEqual(['past']);
    now = 1_500;
    jest.advanceTimersByTime(500);
    expect(fired).toEqual(['past', 'a']);
  });

  it('re-arming moves the time', () => {
    const fired: string[] = [];
    const d = new Deadlines(
      (id) => fired.push(id),
      () => 0,
    );
    d.arm('a', 100);
    d.arm('a', 1_000);
    jest.advanceTimersByTime(500);
    expect(fired).toEqual([]);
    jest.advanceTimersByTime(500);
    expect(fired).toEqual(['a']);
  });

  it('reaches times beyond what one Node timer holds in steps, never early', () => {
    let now = 0;
    const fired: string[] = [];
    const d = new Deadlines(
      (id) => fired.push(id),
      () => now,
    );
    d.arm('far', MAX_TIMER_MS + 10_000);
    now = MAX_TIMER_MS;
    jest.advanceTimersByTime(MAX_TIMER_MS);
    expect(fired).toEqual([]);
    expect(d.armed('far')).toBe(true);
    now = MAX_TIMER_MS + 10_000;
    jest.advanceTimersByTime(10_000);
    expect(fired).toEqual(['far']);
  });
});

describe('sandbox views', () => {
  const record: SandboxRecord = {
    sandboxID: 's1',
    templateID: 'tid',
    alias: 'proxy',
    envdAccessToken: 'secret',
    state: 'paused',
    startedAt: '2026-01-01T00:00:00.000Z',
    endAt: '2026-01-01T00:05:00.000Z',
    cpuCount: 1,
    memoryMB: 1024,
    metadata: { a: 'b' },
    envVars: { HIDDEN: '1' },
    templateEnvs: {},
    autoPause: true,
    autoResume: true,
    address: '10.0.0.2',
    agentPort: 49983,
    defaultUser: 'user',
  };
  const ctx = { domain: null, clientID: 'sandbox-kit' };

  it('detail carries the token and the envd version; env vars and addresses stay inside', () => {
    const detail = sandboxDetail(record, ctx);
    expect(detail).toMatchObject({
      sandboxID: 's1',
      envdAccessToken: 'secret',
      envdVersion: expect.stringMatching(/^\d+\.\d+\.\d+$/),
      lifecycle: { onTimeout: 'pause', autoResume: true },
    });
    expect(JSON.stringify(detail)).not.toContain('HIDDEN');
    expect(JSON.stringify(detail)).not.toContain('10.0.0.2');
  });

  it('a list entry has no token', () => {
    expect(listedSandbox(record, ctx)).not.toHaveProperty('envdAccessToken');
  });
});
