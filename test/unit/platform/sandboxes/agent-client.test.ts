import { encodeEnvelope } from '../../../../src/contract/connect-envelope';
import { readEnvelopes } from '../../../../src/platform/sandboxes/agent-client';

const envelope = (flags: number, message: unknown) => encodeEnvelope(flags, Buffer.from(JSON.stringify(message)));

async function collect(chunks: Buffer[]) {
  async function* source() {
    for (const c of chunks) yield c;
  }
  const out: unknown[] = [];
  for await (const e of readEnvelopes(source())) out.push(e);
  return out;
}

describe('Connect envelopes', () => {
  it('reads messages however the stream is cut, end-stream flag included', async () => {
    const bytes = Buffer.concat([envelope(0, { event: { start: { pid: 7 } } }), envelope(2, {})]);
    const cuts = [bytes.subarray(0, 3), bytes.subarray(3, 20), bytes.subarray(20)];
    expect(await collect(cuts)).toEqual([
      { flags: 0, json: { event: { start: { pid: 7 } } } },
      { flags: 2, json: {} },
    ]);
  });

  it('refuses a stream cut inside a message', async () => {
    await expect(collect([envelope(0, { a: 1 }).subarray(0, 8)])).rejects.toThrow('cut inside a message');
  });
});
