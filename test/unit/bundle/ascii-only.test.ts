/** The bundles are ASCII only, with the same meaning: what the loader's latin1 read needs (scripts/bundle.ts). */
import * as vm from 'node:vm';
import { asciiOnly } from '../../../scripts/bundle';

const run = (code: string): unknown => vm.runInNewContext(code);

test('every character past ASCII becomes an escape; strings, templates, regular expressions and names mean the same', () => {
  const code = [
    '// a comment — with a dash and 😀',
    'const caf\u00e9 = "na\u00efve — 😀";',
    'const t = `\u00bd ` + (1 + 1);',
    'const r = /[—😀]/.test("x—y");',
    '[café, t, r]',
  ].join('\n');
  const ascii = asciiOnly(code);
  expect(ascii).not.toMatch(/[\u0080-\uffff]/);
  expect(run(ascii)).toEqual(run(code));
  expect(run(ascii)).toEqual(['naïve — 😀', '½ 2', true]);
});

test('ASCII code is left as it is', () => {
  const code = 'module.exports = { a: "plain", b: /x\\u00e9/ };';
  expect(asciiOnly(code)).toBe(code);
});
