import { BoundedLines, utf8Boundary } from '../../../src/util/bounded-lines';

function split(chunks: Array<string | Buffer>, max: number): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  const lines = new BoundedLines(max, (line, cut) => out.push([line, cut]));
  for (const c of chunks) lines.push(Buffer.isBuffer(c) ? c : Buffer.from(c));
  lines.end();
  return out;
}

test('splits at \\n, \\r\\n and a lone \\r, also across chunks; a last line without its end counts', () => {
  expect(split(['a\nb\r', '\nc\rd', 'e\n', 'tail'], 100)).toEqual([
    ['a', 0],
    ['b', 0],
    ['c', 0],
    ['de', 0],
    ['tail', 0],
  ]);
  expect(split(['', '\n\n'], 10)).toEqual([
    ['', 0],
    ['', 0],
  ]);
});

test('keeps at most maxBytes of a line and counts the rest, however long and however chunked', () => {
  const chunks = Array.from({ length: 1000 }, () => 'x'.repeat(1000));
  expect(split([...chunks, '\nnext\n'], 64)).toEqual([
    ['x'.repeat(64), 1_000_000 - 64],
    ['next', 0],
  ]);
});

test('cuts at a UTF-8 character boundary', () => {
  // 'é' is two bytes: a cut after 3 bytes of 'aéé' keeps 'aé' and counts the rest.
  expect(split(['aéé\n'], 4)).toEqual([['aé', 2]]);
  expect(split(['aéé\n'], 3)).toEqual([['aé', 2]]);
  expect(split(['aéé\n'], 2)).toEqual([['a', 4]]);
  expect(utf8Boundary(Buffer.from('a€', 'utf8').subarray(0, 3))).toBe(1);
  expect(utf8Boundary(Buffer.from('a€', 'utf8'))).toBe(4);
});
