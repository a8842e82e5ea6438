import { LineSplitter, logEntry, MAX_LINE_CHARS, selectLogs, v1Line, type SandboxLogEntry } from '../../../../src/platform/sandboxes/logs';

const at = (iso: string, level: SandboxLogEntry['level'], message: string): SandboxLogEntry => ({
  timestamp: iso,
  level,
  message,
  fields: { logger: 'start-cmd' },
});

const entries = [
  at('2026-01-01T00:00:01.000Z', 'info', 'one'),
  at('2026-01-01T00:00:02.000Z', 'warn', 'two'),
  at('2026-01-01T00:00:03.000Z', 'error', 'three'),
  at('2026-01-01T00:00:04.000Z', 'debug', 'four'),
];

test('pages of the log: from a time, in either direction, by level and text, at most limit', () => {
  const ms = (s: number) => Date.parse(`2026-01-01T00:00:0${s}.000Z`);
  expect(selectLogs(entries, { direction: 'forward', limit: 10 }).map((e) => e.message)).toEqual(['one', 'two', 'three', 'four']);
  expect(selectLogs(entries, { fromMs: ms(2), direction: 'forward', limit: 2 }).map((e) => e.message)).toEqual(['two', 'three']);
  expect(selectLogs(entries, { fromMs: ms(3), direction: 'backward', limit: 10 }).map((e) => e.message)).toEqual(['three', 'two', 'one']);
  expect(selectLogs(entries, { direction: 'forward', limit: 10, minLevel: 'warn' }).map((e) => e.message)).toEqual(['two', 'three']);
  expect(selectLogs(entries, { direction: 'forward', limit: 10, search: 'o' }).map((e) => e.message)).toEqual(['one', 'two', 'four']);
});

test('v1 lines are JSON objects with level, logger and message: what `e2b sandbox logs` parses', () => {
  const line = v1Line(entries[0] as SandboxLogEntry);
  expect(line.timestamp).toBe('2026-01-01T00:00:01.000Z');
  expect(JSON.parse(line.line)).toEqual({ level: 'info', logger: 'start-cmd', message: 'one' });
  expect(logEntry('info', 'platform', 'x'.repeat(MAX_LINE_CHARS + 10)).message.length).toBe(MAX_LINE_CHARS + 1);
});

test('output chunks become lines; a partial line waits for its end or the flush', () => {
  const lines: string[] = [];
  const split = new LineSplitter((l) => lines.push(l));
  split.push('hel');
  split.push('lo\r\nwor');
  expect(lines).toEqual(['hello']);
  split.push('ld\nand');
  split.flush();
  expect(lines).toEqual(['hello', 'world', 'and']);
});
