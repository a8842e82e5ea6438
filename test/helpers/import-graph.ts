/**
 * The kit's import graph and the rules docs/design.md states about it: which room a file is in, which rooms each row
 * of the architecture table lets it import, and the import cycles between files. Reading files happens in
 * `readImportGraph`; everything else is pure, so the rules can be tried on made-up graphs too.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import * as ts from 'typescript';

/** File -> the files it imports; paths relative to the repository, with `/`. */
export type ImportGraph = Map<string, string[]>;

export interface RoomRule {
  /** A folder, e.g. `src/platform/http` or `infra`. */
  room: string;
  /** The rooms it may import; the table's "everything above" is expanded to every room of an earlier row. */
  dependsOn: string[];
  /** The row says "everything above": a permission, not a list of what the room uses. */
  everythingAbove: boolean;
}

const SOURCE = /\.(ts|mts|js|mjs|cjs)$/;
const RESOLVE_SUFFIXES = ['', '.ts', '.js', '.mjs', '.json', '/index.ts', '/index.js'];

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? filesUnder(path) : [path];
  });
}

/** Every import with a relative specifier (static, dynamic, `export from`, type-only) of the files under `roots`. */
export function readImportGraph(repo: string, roots: string[]): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const file of roots.flatMap((r) => filesUnder(join(repo, r)))) {
    const from = relative(repo, file);
    graph.set(from, []);
    if (!SOURCE.test(file) || file.endsWith('.d.ts')) continue;
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of info.importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const base = resolve(dirname(file), fileName);
      const target = RESOLVE_SUFFIXES.map((s) => base + s).find((c) => existsSync(c) && statSync(c).isFile());
      if (target === undefined) throw new Error(`${from}: cannot resolve ${fileName}`);
      graph.get(from)!.push(relative(repo, target));
    }
  }
  return graph;
}

/** The architecture table of docs/design.md: rows `| \`room\` | job | depends on |`, in order. */
export function parseRoomTable(markdown: string): RoomRule[] {
  const rules: RoomRule[] = [];
  const header = markdown.indexOf('| room | job | depends on |');
  if (header < 0) throw new Error('no architecture table (| room | job | depends on |)');
  for (const line of markdown.slice(header).split('\n').slice(2)) {
    if (!line.startsWith('|')) break;
    const cells = line.split('|').map((c) => c.trim());
    const room = /^`([^`]+)`$/.exec(cells[1] ?? '')?.[1]?.replace(/\/$/, '');
    const depends = cells.at(-2) ?? '';
    if (room === undefined) throw new Error(`architecture table row without a room: ${line}`);
    const dependsOn =
      depends === 'nothing'
        ? []
        : depends === 'everything above'
          ? rules.map((r) => r.room)
          : depends.split(',').map((d) => {
              const name = d.trim();
              return name === 'infra' || name.startsWith('templates') ? name : `src/${name}`;
            });
    rules.push({ room, dependsOn, everythingAbove: depends === 'everything above' });
  }
  return rules;
}

/** The room of a file: the row whose folder holds it most closely (undefined when no row does). */
export function roomOf(file: string, rooms: readonly string[]): string | undefined {
  return rooms.filter((r) => file.startsWith(`${r}/`)).sort((a, b) => b.length - a.length)[0];
}

/** `a -> b` for every room a imports that is not among its row's dependencies, with one file import as the example. */
export function tableViolations(graph: ImportGraph, rules: RoomRule[]): string[] {
  const rooms = rules.map((r) => r.room);
  const allowed = new Map(rules.map((r) => [r.room, new Set(r.dependsOn)]));
  const found = new Map<string, string>();
  for (const [from, targets] of graph) {
    const a = roomOf(from, rooms);
    if (a === undefined) {
      found.set(`${from}: in no room of the table`, '');
      continue;
    }
    for (const to of targets) {
      const b = roomOf(to, rooms);
      if (b === a) continue;
      if (b === undefined || !allowed.get(a)!.has(b)) found.set(`${a} -> ${b ?? to}`, `${from} imports ${to}`);
    }
  }
  return [...found].map(([edge, example]) => (example ? `${edge} (${example})` : edge)).sort();
}

/** Dependencies a row lists that no import of its room uses (the table would say more than the code does). */
export function unusedDependencies(graph: ImportGraph, rules: RoomRule[]): string[] {
  const rooms = rules.map((r) => r.room);
  const used = new Set<string>();
  for (const [from, targets] of graph) for (const to of targets) used.add(`${roomOf(from, rooms)} -> ${roomOf(to, rooms)}`);
  return rules
    .filter((r) => !r.everythingAbove)
    .flatMap((r) => r.dependsOn.filter((d) => !used.has(`${r.room} -> ${d}`)).map((d) => `${r.room} -> ${d}`));
}

/** Rows that name a room that is not above them, so an arrow could point back up. */
export function upwardDependencies(rules: RoomRule[]): string[] {
  return rules.flatMap((r, i) => {
    const above = new Set(rules.slice(0, i).map((x) => x.room));
    return r.dependsOn.filter((d) => !above.has(d)).map((d) => `${r.room} -> ${d}`);
  });
}

/** Every group of files that import each other, directly or through others (strongly connected components). */
export function importCycles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}
