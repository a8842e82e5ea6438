import { decodeCursor, encodeCursor, listSandboxes } from '../../../../src/platform/sandboxes/list';
import { listQuerySchema, queryObject } from '../../../../src/platform/sandboxes/requests';
import type { SandboxRecord } from '../../../../src/platform/sandboxes/record';
import { ApiError } from '../../../../src/platform/http/types';

function record(id: string, startedAt: string, extra: Partial<SandboxRecord> = {}): SandboxRecord {
  return {
    sandboxID: id,
    templateID: 'base',
    alias: 'base',
    envdAccessToken: 't',
    state: 'running',
    startedAt,
    endAt: startedAt,
    cpuCount: 1,
    memoryMB: 512,
    metadata: {},
    envVars: {},
    templateEnvs: {},
    autoPause: false,
    autoResume: false,
    agentPort: 49983,
    defaultUser: 'user',
    ...extra,
  };
}

const query = (q: string) => listQuerySchema.parse(queryObject(new URLSearchParams(q)));

const records = [
  record('a', '2026-01-01T00:00:01.000Z', { metadata: { team: 'x', env: 'dev' } }),
  record('b', '2026-01-01T00:00:02.000Z', { metadata: { team: 'x' }, state: 'paused' }),
  record('c', '2026-01-01T00:00:02.000Z', { templateID: 'tpl1', alias: 'proxy' }),
  record('d', '2026-01-01T00:00:03.000Z', { state: 'creating' }),
];

describe('listSandboxes', () => {
  it('lists newest first, never half-made ones', () => {
    expect(listSandboxes(records, query('')).page.map((r) => r.sandboxID)).toEqual(['c', 'b', 'a']);
    expect(listSandboxes(records, query('order=asc')).page.map((r) => r.sandboxID)).toEqual(['a', 'b', 'c']);
  });

  it('pages with a token that continues after the last item, until no token', () => {
    const first = listSandboxes(records, query('limit=2'));
    expect(first.page.map((r) => r.sandboxID)).toEqual(['c', 'b']);
    expect(first.nextToken).toBeDefined();
    const second = listSandboxes(records, query(`limit=2&nextToken=${first.nextToken}`));
    expect(second).toEqual({ page: [records[0]] });
  });

  it('keeps its place when the item a token names is gone', () => {
    const first = listSandboxes(records, query('limit=1'));
    const rest = listSandboxes(
      records.filter((r) => r.sandboxID !== 'c'),
      query(`nextToken=${first.nextToken}`),
    );
    expect(rest.page.map((r) => r.sandboxID)).toEqual(['b', 'a']);
  });

  it('filters by state, template (ID or alias) and every metadata pair', () => {
    expect(listSandboxes(records, query('state=paused')).page.map((r) => r.sandboxID)).toEqual(['b']);
    expect(listSandboxes(records, query('state=running,paused')).page).toHaveLength(3);
    expect(listSandboxes(records, query('template=proxy')).page.map((r) => r.sandboxID)).toEqual(['c']);
    expect(listSandboxes(records, query('template=tpl1')).page.map((r) => r.sandboxID)).toEqual(['c']);
    // The SDK sends metadata as one URL-encoded k=v&k=v value.
    expect(listSandboxes(records, query(`metadata=${encodeURIComponent('team=x&env=dev')}`)).page.map((r) => r.sandboxID)).toEqual(['a']);
    expect(listSandboxes(records, query(`metadata=${encodeURIComponent('team=x')}`)).page.map((r) => r.sandboxID)).toEqual(['b', 'a']);
  });

  it('refuses a token it did not give out', () => {
    expect(() => decodeCursor('nonsense')).toThrow(ApiError);
    expect(decodeCursor(encodeCursor({ startedAt: 's', sandboxID: 'i' }))).toEqual({ startedAt: 's', sandboxID: 'i' });
  });
});

describe('listQuerySchema', () => {
  it('has E2B defaults', () => {
    expect(query('')).toEqual({ limit: 100, order: 'desc' });
  });

  it('refuses limits out of range and unknown states', () => {
    expect(listQuerySchema.safeParse({ limit: '0' }).success).toBe(false);
    expect(listQuerySchema.safeParse({ limit: '101' }).success).toBe(false);
    expect(listQuerySchema.safeParse({ limit: '1.5' }).success).toBe(false);
    expect(listQuerySchema.safeParse({ state: 'running,stopped' }).success).toBe(false);
  });
});
