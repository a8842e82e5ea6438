/**
 * Why Stat and ListDir answers have their own writer: a ListDir answer of N entries built two ways from the same
 * entries, in fresh processes, each run with --expose-gc so the heap before is clean:
 *  - chunks: each entry's JSON text pushed into ~64 KiB UTF-8 chunks (what the agent does);
 *  - messages: the entries as protobuf-es messages (fromJson), then toJsonString (what a router handler does).
 * Prints time and peak heap growth of each (medians of 3 runs).
 *
 *   node --expose-gc dist/scripts/bench/agent-writers.js [--entries 50000]
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { fromJson, toJsonString } from '@bufbuild/protobuf';
import { Accounts } from '../../src/agent/accounts';
import { describeEntry, type EntryContext } from '../../src/agent/filesystem/entry';
import { ListDirResponseSchema } from '../../src/contract/gen/filesystem_pb';
import { JsonChunks } from '../../src/agent/filesystem/json-chunks';

function entriesOf(dir: string, ctx: EntryContext): string[] {
  return fs.readdirSync(dir).map((name) => {
    const p = Buffer.from(path.join(dir, name));
    return describeEntry(p, Buffer.from(name), fs.lstatSync(p, { bigint: true }), ctx);
  });
}

function measure(kind: string, dir: string): { ms: number; heapMiB: number; bytes: number } {
  const ctx: EntryContext = { accounts: new Accounts(), xattrPrefix: 'user.svc.' };
  const entries = entriesOf(dir, ctx);
  (global as { gc?: () => void }).gc?.();
  const before = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
  let peak = before;
  const sample = () => (peak = Math.max(peak, process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers));
  const t = process.hrtime.bigint();
  let bytes: number;
  if (kind === 'chunks') {
    const out = new JsonChunks();
    out.push('{"entries":[');
    entries.forEach((e, i) => {
      out.push(i === 0 ? e : `,${e}`);
      if (i % 1000 === 0) sample();
    });
    out.push(']}');
    bytes = out.byteLength;
  } else {
    const objects = entries.map((e, i) => {
      if (i % 1000 === 0) sample();
      return JSON.parse(e) as unknown;
    });
    const message = fromJson(ListDirResponseSchema, { entries: objects } as never);
    sample();
    const body = Buffer.from(toJsonString(ListDirResponseSchema, message), 'utf8');
    bytes = body.length;
  }
  sample();
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  return { ms: +ms.toFixed(1), heapMiB: +((peak - before) / 1048576).toFixed(1), bytes };
}

function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}

if (process.argv[2] === '--child') {
  console.log(JSON.stringify(measure(process.argv[3]!, process.argv[4]!)));
} else {
  const { values } = parseArgs({ options: { entries: { type: 'string', default: '50000' } } });
  const n = Number(values.entries);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-writers-'));
  try {
    process.stderr.write(`agent-writers: making ${n} files\n`);
    for (let i = 0; i < n; i++) fs.writeFileSync(path.join(dir, `file-${String(i).padStart(6, '0')}.txt`), '');
    const result: Record<string, unknown> = {};
    for (const kind of ['chunks', 'messages']) {
      const runs = [0, 1, 2].map(
        () =>
          JSON.parse(execFileSync(process.execPath, ['--expose-gc', __filename, '--child', kind, dir], { encoding: 'utf8' })) as {
            ms: number;
            heapMiB: number;
            bytes: number;
          },
      );
      result[kind] = { ms: median(runs.map((r) => r.ms)), heapMiB: median(runs.map((r) => r.heapMiB)), bytes: runs[0]!.bytes };
    }
    console.log(JSON.stringify({ entries: n, ...result }, null, 2));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
