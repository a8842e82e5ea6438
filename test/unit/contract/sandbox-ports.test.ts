import { isHostMask, maskedHost } from '../../../src/contract/sandbox-ports';

const P = ['$', '{PORT}'].join('');

describe('request host masks', () => {
  it('puts the port in for every placeholder', () => {
    expect(maskedHost(`localhost:${P}`, 3000)).toBe('localhost:3000');
    expect(maskedHost(`${P}-app.example.com`, 8443)).toBe('8443-app.example.com');
    expect(maskedHost('fixed.example.com', 80)).toBe('fixed.example.com');
  });

  it('takes host names and IPv4 addresses with an optional port, with or without the placeholder', () => {
    for (const ok of [`localhost:${P}`, `${P}-x.example.com`, 'example.com', '127.0.0.1:8080', 'a', `x${P}y.test:${P}`]) {
      expect([ok, isHostMask(ok)]).toEqual([ok, true]);
    }
  });

  it('refuses what would not be one Host header: line breaks, spaces, paths, schemes, bad ports, other placeholders', () => {
    for (const bad of [
      '',
      'a.example.com\r\nX-Evil: 1',
      'a b',
      'a.example.com/path',
      'http://a.example.com',
      'a.example.com:0',
      'a.example.com:70000',
      'a..example.com',
      '-a.example.com',
      ['$', '{HOST}.example.com'].join(''),
      `${'a'.repeat(250)}.com`,
      '[::1]:80',
    ]) {
      expect([bad, isHostMask(bad)]).toEqual([bad, false]);
    }
  });
});
