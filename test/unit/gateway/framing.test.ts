import { requestFraming } from '../../../src/gateway/framing';

describe('requestFraming', () => {
  it('frames by Content-Length, by chunked, or not at all', () => {
    expect(requestFraming({ 'content-length': '15' })).toEqual({ kind: 'length', length: 15 });
    expect(requestFraming({ 'transfer-encoding': 'chunked' })).toEqual({ kind: 'chunked' });
    expect(requestFraming({ 'transfer-encoding': 'Chunked ' })).toEqual({ kind: 'chunked' });
    expect(requestFraming({})).toEqual({ kind: 'none' });
    expect(requestFraming({ 'content-length': '0' })).toEqual({ kind: 'none' });
  });

  it('refuses Content-Length together with Transfer-Encoding', () => {
    expect(requestFraming({ 'content-length': '5', 'transfer-encoding': 'chunked' })).toMatchObject({
      kind: 'refused',
      message: expect.stringContaining('both Content-Length and Transfer-Encoding'),
    });
  });

  it.each(['gzip', 'chunked, gzip', 'gzip, chunked', 'identity'])('refuses Transfer-Encoding %j, naming what is accepted', (te) => {
    expect(requestFraming({ 'transfer-encoding': te })).toMatchObject({
      kind: 'refused',
      message: expect.stringContaining('"chunked" or by Content-Length only'),
    });
  });

  it.each(['5, 5', '-1', '1e3', ' 5', '0x10', '1234567890123456'])('refuses Content-Length %j', (cl) => {
    expect(requestFraming({ 'content-length': cl })).toMatchObject({ kind: 'refused', message: expect.stringContaining('Content-Length') });
  });
});
