import { fromJson } from '@bufbuild/protobuf';
import { codeToString } from '@connectrpc/connect/protocol-connect';
import { AgentError } from '../../../src/agent/errors';
import { decodeListDirRequest, decodeStatRequest } from '../../../src/agent/filesystem/requests';
import { ListDirRequestSchema, StatRequestSchema } from '../../../src/contract/gen/filesystem_pb';

type Outcome = { ok: true; value: Record<string, unknown> } | { ok: false; field?: string };

/** What the agent's reading gives: the fields, or the field its error names. */
function ours(decode: (body: unknown) => object, body: unknown): Outcome {
  try {
    return { ok: true, value: { ...decode(body) } };
  } catch (err) {
    if (!(err instanceof AgentError) || codeToString(err.code) !== 'invalid_argument') throw err;
    const named = /field ("(?:[^"\\]|\\.)*")/.exec(err.rawMessage)?.[1];
    return { ok: false, field: named === undefined ? undefined : JSON.parse(named) };
  }
}

/** What protobuf-es's fromJson gives for the generated schema. */
function library(schema: typeof StatRequestSchema | typeof ListDirRequestSchema, body: unknown): Outcome {
  try {
    const { $typeName: _, ...value } = fromJson(schema, body as never) as unknown as Record<string, unknown>;
    return { ok: true, value };
  } catch (err) {
    const text = (err as Error).message;
    const field = /key "(.*)" is unknown/.exec(text)?.[1] ?? /cannot decode field [\w.]+\.(\w+) from JSON/.exec(text)?.[1];
    return { ok: false, field };
  }
}

/** Both, with the field an unknown-key error names taken as the key. */
function compare(message: 'StatRequest' | 'ListDirRequest', body: unknown): [Outcome, Outcome] {
  const [decode, schema] =
    message === 'StatRequest' ? [decodeStatRequest, StatRequestSchema] : [decodeListDirRequest, ListDirRequestSchema];
  const a = ours(decode, body);
  const b = library(schema as typeof StatRequestSchema, body);
  return [a, b];
}

/** Values a request field may be given: the edges of both kinds, and strings Number() reads in its own ways. */
const VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -0,
  1,
  3,
  -1,
  1.5,
  2 ** 32 - 1,
  2 ** 32,
  1e21,
  Number.MAX_SAFE_INTEGER,
  -1e-7,
  '',
  ' ',
  '/',
  '/x',
  '~/a b',
  'x'.repeat(300),
  '\ud800',
  '\udc00x',
  '\ud83d\ude00',
  '\u0000',
  '0',
  '-0',
  '3',
  '+5',
  '007',
  '1.0',
  '1.5',
  '1e2',
  '1E-2',
  '0x10',
  '0b11',
  '0o7',
  '-0x1',
  'Infinity',
  '-1',
  '4294967295',
  '4294967296',
  ' 1',
  '1 ',
  '\u00a01',
  '1\n',
  '\ufeff1',
  '1_0',
  '١',
  'NaN',
  '.5',
  '5.',
  '0.0e0',
  [],
  [1],
  {},
  { a: 1 },
];
const KEYS = ['path', 'depth', 'Path', 'DEPTH', 'x', '', '__proto__', '[filesystem.x]', 'constructor', 'toString'];

describe('Stat and ListDir requests, read without the protobuf library', () => {
  test('each single-field body is read exactly as protobuf-es reads it', () => {
    for (const message of ['StatRequest', 'ListDirRequest'] as const) {
      for (const key of KEYS) {
        for (const value of VALUES) {
          const body = JSON.parse(`{${JSON.stringify(key)}:${JSON.stringify(value) ?? 'null'}}`);
          const [a, b] = compare(message, body);
          expect({ message, body, outcome: a }).toEqual({ message, body, outcome: b });
        }
      }
    }
  });

  test('random bodies of several fields are read as protobuf-es reads them', () => {
    // mulberry32: the same bodies on every run.
    let seed = 7;
    const random = (n: number) => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) % n;
    };
    let accepted = 0;
    let rejected = 0;
    for (let i = 0; i < 3000; i++) {
      const entries: string[] = [];
      const n = random(4);
      for (let k = 0; k < n; k++) {
        const key = KEYS[random(4) === 0 ? random(KEYS.length) : random(2)]!;
        entries.push(`${JSON.stringify(key)}:${JSON.stringify(VALUES[random(VALUES.length)]) ?? 'null'}`);
      }
      const text = `{${entries.join(',')}}`;
      // A repeated key is an error of protobuf's own JSON parser; given a parsed object, the last one counts.
      const body = JSON.parse(text);
      for (const message of ['StatRequest', 'ListDirRequest'] as const) {
        const [a, b] = compare(message, body);
        expect({ message, text, outcome: a }).toEqual({ message, text, outcome: b });
        if (a.ok) accepted++;
        else rejected++;
      }
    }
    // Both outcomes were exercised, not one of them only.
    expect(Math.min(accepted, rejected)).toBeGreaterThan(600);
  });

  test('not an object, and what an error says', () => {
    const said = (decode: (b: unknown) => unknown, body: unknown) => {
      try {
        decode(body);
      } catch (err) {
        return `${codeToString((err as AgentError).code)}: ${(err as AgentError).rawMessage}`;
      }
      throw new Error('accepted');
    };
    expect(said(decodeListDirRequest, [])).toBe('invalid_argument: ListDirRequest must be a JSON object (fields: path, depth)');
    expect(said(decodeStatRequest, null)).toBe('invalid_argument: StatRequest must be a JSON object (fields: path)');
    expect(said(decodeStatRequest, 'x')).toMatch(/must be a JSON object/);
    expect(said(decodeStatRequest, { path: '/', depth: 1 })).toBe(
      'invalid_argument: invalid StatRequest: unknown field "depth" (fields: path)',
    );
    expect(said(decodeStatRequest, { path: 1 })).toBe(
      'invalid_argument: invalid StatRequest: field "path": expected string, got 1 (fields: path)',
    );
    expect(said(decodeListDirRequest, { depth: '1\n' })).toBe(
      'invalid_argument: invalid ListDirRequest: field "depth": expected an integer 0..4294967295 (uint32, a JSON number or a string), got "1\\n" (fields: path, depth)',
    );
    expect(said(decodeListDirRequest, { depth: {} })).toMatch(/field "depth": .* got an object/);
    // A long wrong value is not sent back whole.
    expect(said(decodeListDirRequest, { depth: 'x'.repeat(10_000) }).length).toBeLessThan(300);
  });

  test('defaults, nulls and the values a client sends', () => {
    expect(decodeListDirRequest({})).toEqual({ path: '', depth: 0 });
    expect(decodeListDirRequest({ path: null, depth: null })).toEqual({ path: '', depth: 0 });
    expect(decodeListDirRequest({ path: '/x', depth: '3' })).toEqual({ path: '/x', depth: 3 });
    expect(decodeListDirRequest({ depth: 4294967295 }).depth).toBe(4294967295);
    expect(decodeStatRequest({ path: '/home/user/a b' })).toEqual({ path: '/home/user/a b' });
  });
});
