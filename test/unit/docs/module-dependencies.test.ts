/**
 * docs/design.md's architecture table is the rule for imports: every import between rooms is one its row names, every
 * dependency a row names is one the code has, the arrows point one way, and no files import each other.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  importCycles,
  type ImportGraph,
  parseRoomTable,
  readImportGraph,
  tableViolations,
  unusedDependencies,
  upwardDependencies,
} from '../../helpers/import-graph';

const REPO = join(__dirname, '..', '..', '..');
const rules = parseRoomTable(readFileSync(join(REPO, 'docs', 'design.md'), 'utf8'));
const graph = readImportGraph(REPO, ['src', 'infra', 'templates']);

describe('the module dependency table of docs/design.md', () => {
  it('covers every file of src, infra and templates, and every import between rooms is one the table names', () => {
    expect(tableViolations(graph, rules)).toEqual([]);
  });

  it('names no dependency the code does not have', () => {
    expect(unusedDependencies(graph, rules)).toEqual([]);
  });

  it('points one way: each row depends only on rows above it', () => {
    expect(upwardDependencies(rules)).toEqual([]);
  });

  it('leaves no import cycle between files of src, infra and templates', () => {
    expect(importCycles(graph)).toEqual([]);
  });
});

describe('the checks catch what they are for', () => {
  const table = `| room | job | depends on |
|---|---|---|
| \`src/util\` | helpers | nothing |
| \`src/platform\` | the API | util |
| \`src/platform/http\` | the server | util |
| \`src/cli\` | the command | everything above |
`;
  const made = (edges: Record<string, string[]>): ImportGraph => new Map(Object.entries(edges));

  it('reads rows in order, expanding "everything above"', () => {
    expect(parseRoomTable(table)).toEqual([
      { room: 'src/util', dependsOn: [], everythingAbove: false },
      { room: 'src/platform', dependsOn: ['src/util'], everythingAbove: false },
      { room: 'src/platform/http', dependsOn: ['src/util'], everythingAbove: false },
      { room: 'src/cli', dependsOn: ['src/util', 'src/platform', 'src/platform/http'], everythingAbove: true },
    ]);
  });

  it('reports an import the table does not name, a file in no room, and a dependency nothing uses', () => {
    const rules = parseRoomTable(table);
    const g = made({
      'src/util/a.ts': ['src/platform/b.ts'],
      'src/platform/b.ts': ['src/platform/http/c.ts'],
      'src/platform/http/c.ts': [],
      'scripts/d.ts': [],
    });
    expect(tableViolations(g, rules)).toEqual([
      'scripts/d.ts: in no room of the table',
      'src/platform -> src/platform/http (src/platform/b.ts imports src/platform/http/c.ts)',
      'src/util -> src/platform (src/util/a.ts imports src/platform/b.ts)',
    ]);
    expect(unusedDependencies(g, rules)).toEqual(['src/platform -> src/util', 'src/platform/http -> src/util']);
  });

  it('reports a row that depends on a row below it', () => {
    const upside = parseRoomTable(table.replace('| `src/util` | helpers | nothing |', '| `src/util` | helpers | cli |'));
    expect(upwardDependencies(upside)).toEqual(['src/util -> src/cli']);
  });

  it('finds a cycle through several files, and a file importing itself', () => {
    const g = made({ a: ['b'], b: ['c'], c: ['a'], d: ['d'], e: ['a'] });
    expect(importCycles(g)).toEqual([['a', 'b', 'c'], ['d']]);
  });
});
