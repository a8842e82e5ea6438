import { execFileSync } from 'node:child_process';
import { shellQuote } from '../../../src/util/shell-quote';

describe('shellQuote', () => {
  it('leaves a word of safe characters as it is', () => {
    expect(shellQuote('plain-arg_1.txt')).toBe('plain-arg_1.txt');
    expect(shellQuote('/etc/shadowsocks-libev/config.json')).toBe('/etc/shadowsocks-libev/config.json');
  });

  it('quotes the empty word and anything a shell would read', () => {
    expect(shellQuote('')).toBe("''");
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
  });

  it('gives sh back exactly the word, whatever it holds', () => {
    const words = ['', 'a b', "it's", '$HOME', '`id`', '"q"', '\\', 'a\nb', '*', '-n', "''", 'ü'];
    const out = execFileSync('/bin/sh', ['-c', `printf '%s\\0' ${words.map(shellQuote).join(' ')}`]);
    expect(out.toString('utf8').split('\0').slice(0, -1)).toEqual(words);
  });
});
