import { bytesToText, textToBytes } from '../../../src/agent/bytes-text';
import { goModeString, kindOf } from '../../../src/agent/filesystem/file-mode';
import { formatTimestampNs } from '../../../src/agent/filesystem/timestamp';

describe('bytesToText / textToBytes', () => {
  test('valid UTF-8 passes through unchanged', () => {
    for (const s of ['plain.txt', 'é', '日本語', '🙂 emoji', '%41', '']) {
      expect(bytesToText(Buffer.from(s))).toBe(s);
      expect(textToBytes(s)).toEqual(Buffer.from(s));
    }
  });

  test('stray bytes become U+EF80..U+EFFF and come back', () => {
    const raw = Buffer.from([0x61, 0xff, 0xc3, 0x28, 0x80, 0xe2, 0x82]);
    const text = bytesToText(raw);
    expect(text).toBe('a\uefff\uefc3(\uef80\uefe2\uef82');
    expect(textToBytes(text)).toEqual(raw);
    expect(Buffer.from(text, 'utf8').toString('utf8')).toBe(text); // valid Unicode: no lone surrogates
  });

  test('a real U+EF80..U+EFFF character in a name is escaped too, so the mapping stays reversible', () => {
    const raw = Buffer.from('x\uef80y', 'utf8');
    const text = bytesToText(raw);
    expect(text).toBe('x\uefee\uefbe\uef80y');
    expect(textToBytes(text)).toEqual(raw);
  });

  test('round trip of every single byte and of random byte strings', () => {
    for (let b = 0; b < 256; b++) {
      if (b === 0) continue;
      const raw = Buffer.of(0x2f, b, 0x2f);
      expect(textToBytes(bytesToText(raw))).toEqual(raw);
    }
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % 256;
    for (let n = 0; n < 500; n++) {
      const raw = Buffer.from(Array.from({ length: 1 + (n % 12) }, () => rand() || 1));
      expect(textToBytes(bytesToText(raw))).toEqual(raw);
    }
  });

  test('encoded surrogates (ED A0 80) and overlongs (C0 AF) are invalid UTF-8 and escaped byte by byte', () => {
    expect(bytesToText(Buffer.from([0xed, 0xa0, 0x80]))).toBe('\uefed\uefa0\uef80');
    expect(bytesToText(Buffer.from([0xc0, 0xaf]))).toBe('\uefc0\uefaf');
  });

  test('NUL and lone surrogates are refused', () => {
    expect(textToBytes('a\0b')).toEqual({ error: expect.stringContaining('NUL') });
    expect(textToBytes('a\udcffb')).toEqual({ error: expect.stringContaining('surrogate') });
    expect(textToBytes('a\ud83d')).toEqual({ error: expect.stringContaining('surrogate') });
  });
});

describe('goModeString (Go FileMode.String)', () => {
  const cases: Array<[number, string]> = [
    [0o100644, '-rw-r--r--'],
    [0o040755, 'drwxr-xr-x'],
    [0o120777, 'Lrwxrwxrwx'],
    [0o041777, 'dtrwxrwxrwx'],
    [0o104755, 'urwxr-xr-x'],
    [0o102755, 'grwxr-xr-x'],
    [0o020666, 'Dcrw-rw-rw-'],
    [0o060660, 'Drw-rw----'],
    [0o010644, 'prw-r--r--'],
    [0o140755, 'Srwxr-xr-x'],
    [0o100000, '----------'],
  ];
  test.each(cases)('%o -> %s', (mode, text) => expect(goModeString(mode)).toBe(text));

  test('kindOf', () => {
    expect([kindOf(0o100644), kindOf(0o040755), kindOf(0o120777), kindOf(0o010644)]).toEqual(['file', 'dir', 'symlink', 'other']);
  });
});

describe('formatTimestampNs', () => {
  const ns = (s: string) => BigInt(s);
  test('fraction of 0, 3, 6 or 9 digits', () => {
    expect(formatTimestampNs(ns('1700000000000000000'))).toBe('2023-11-14T22:13:20Z');
    expect(formatTimestampNs(ns('1700000000500000000'))).toBe('2023-11-14T22:13:20.500Z');
    expect(formatTimestampNs(ns('1700000000123456000'))).toBe('2023-11-14T22:13:20.123456Z');
    expect(formatTimestampNs(ns('1700000000000000001'))).toBe('2023-11-14T22:13:20.000000001Z');
    expect(formatTimestampNs(ns('1700000000010000000'))).toBe('2023-11-14T22:13:20.010Z');
  });

  test('before the epoch', () => {
    expect(formatTimestampNs(ns('-1'))).toBe('1969-12-31T23:59:59.999999999Z');
    expect(formatTimestampNs(ns('-1500000000'))).toBe('1969-12-31T23:59:58.500Z');
  });

  test('clamped to 0001-01-01 .. 9999-12-31', () => {
    expect(formatTimestampNs(ns('-99999999999000000000'))).toBe('0001-01-01T00:00:00Z');
    expect(formatTimestampNs(ns('999999999999000000000'))).toBe('9999-12-31T23:59:59.999999999Z');
    expect(formatTimestampNs(ns('-62135596800000000000'))).toBe('0001-01-01T00:00:00Z');
  });
});
