import * as vm from 'node:vm';
import { encodeEnvelope, END_STREAM_FLAG, splitEnvelopes } from '../../../src/contract/connect-envelope';

test('envelopes split back into their flags and messages, whatever the chunking; a partial one is left over', () => {
  const bytes = Buffer.concat([encodeEnvelope(0, Buffer.from('{"a":1}')), encodeEnvelope(END_STREAM_FLAG, Buffer.from('{}'))]);
  const whole = splitEnvelopes(bytes);
  expect(whole.frames.map((f) => [f.flags, f.message.toString()])).toEqual([
    [0, '{"a":1}'],
    [2, '{}'],
  ]);
  expect(whole.rest.length).toBe(0);
  const cut = splitEnvelopes(bytes.subarray(0, 14));
  expect(cut.frames.map((f) => f.message.toString())).toEqual(['{"a":1}']);
  expect(cut.rest).toEqual(bytes.subarray(12, 14));
  expect(bytes.readUInt32BE(1)).toBe(7); // big-endian length after the flags byte
});

test('both functions run where only Buffer exists, as the rendered probe embeds them', () => {
  const program = `${encodeEnvelope.toString()}\n${splitEnvelopes.toString()}\nsplitEnvelopes(encodeEnvelope(2, Buffer.from("x"))).frames[0].flags`;
  expect(vm.runInNewContext(program, { Buffer })).toBe(2);
});
