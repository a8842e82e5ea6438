/**
 * The request messages of Stat and ListDir (filesystem.proto), read from a parsed JSON body by protobuf's JSON mapping
 * without the protobuf library: the fast path answers these two, a sandbox's first call is often one of them, and
 * so the agent neither loads that library nor builds its descriptors to answer it (server.ts loads them with the
 * router, on the first call that needs it).
 *
 * The mapping's rules for these fields: a key is a field's name (JSON and proto names are the same here), and any
 * other key is an error; `null` gives the field its default ('' or 0); a string must be well-formed Unicode (it is
 * sent on as UTF-8); a uint32 is an integer 0..4294967295, as a JSON number or as a string that JavaScript's Number()
 * reads, with no white space around it. test/unit/agent/requests.test.ts holds this reading equal to
 * @bufbuild/protobuf's fromJson over the generated schemas. A failure is invalid_argument naming the field, what was
 * given, and what the field accepts.
 */
import { Code } from '../../contract/connect-codes';
import { AgentError } from '../errors';

export interface StatRequest {
  path: string;
}

export interface ListDirRequest {
  path: string;
  /** 0 lists the directory itself, as 1 does. */
  depth: number;
}

type FieldKind = 'string' | 'uint32';

const UINT32_MAX = 0xffff_ffff;
/** A UTF-16 surrogate without its pair: a string no UTF-8 can carry. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** The longest piece of a wrong value an error repeats. */
const SHOWN_CHARS = 64;

export function decodeStatRequest(body: unknown): StatRequest {
  const fields = decodeFields('StatRequest', { path: 'string' }, body);
  return { path: fields.path as string };
}

export function decodeListDirRequest(body: unknown): ListDirRequest {
  const fields = decodeFields('ListDirRequest', { path: 'string', depth: 'uint32' }, body);
  return { path: fields.path as string, depth: fields.depth as number };
}

function decodeFields(message: string, kinds: Record<string, FieldKind>, body: unknown): Record<string, string | number> {
  const known = Object.keys(kinds).join(', ');
  const invalid = (problem: string) => new AgentError(Code.InvalidArgument, `invalid ${message}: ${problem} (fields: ${known})`);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AgentError(Code.InvalidArgument, `${message} must be a JSON object (fields: ${known})`);
  }
  const values = new Map<string, string | number>();
  for (const [name, kind] of Object.entries(kinds)) values.set(name, kind === 'string' ? '' : 0);
  for (const [key, json] of Object.entries(body)) {
    const kind = Object.hasOwn(kinds, key) ? kinds[key] : undefined;
    if (kind === undefined) throw invalid(`unknown field ${JSON.stringify(key)}`);
    if (json === null) continue;
    const value = kind === 'string' ? stringValue(json) : uint32Value(json);
    if (typeof value === 'object') throw invalid(`field ${JSON.stringify(key)}: ${value.problem}`);
    values.set(key, value);
  }
  return Object.fromEntries(values);
}

function stringValue(json: unknown): string | { problem: string } {
  if (typeof json !== 'string') return { problem: `expected string, got ${shown(json)}` };
  if (LONE_SURROGATE.test(json)) return { problem: 'expected string, got one with a lone surrogate (not valid Unicode)' };
  return json;
}

function uint32Value(json: unknown): number | { problem: string } {
  let n: number | undefined;
  if (typeof json === 'number') n = json;
  else if (typeof json === 'string' && json !== '' && json.trim() === json) n = Number(json);
  if (n === undefined || !Number.isInteger(n) || n < 0 || n > UINT32_MAX) {
    return { problem: `expected an integer 0..${UINT32_MAX} (uint32, a JSON number or a string), got ${shown(json)}` };
  }
  return n;
}

function shown(json: unknown): string {
  if (typeof json === 'string') return JSON.stringify(json.length > SHOWN_CHARS ? `${json.slice(0, SHOWN_CHARS)}...` : json);
  if (Array.isArray(json)) return 'an array';
  if (typeof json === 'object' && json !== null) return 'an object';
  return String(json);
}
