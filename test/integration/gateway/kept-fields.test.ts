/**
 * A client connection's repeated request fields (kept-fields.ts): a head whose fields repeat the last head's, but
 * for Content-Length's digits, is read from the kept entry. Every call still reaches the sandbox with its own target,
 * length and body, and a head that differs from the kept one in any byte (a token, a sandbox ID, a name's case) is
 * read and decided on its own: nothing passes on the strength of an earlier call on the same connection.
 */
import { connect } from 'node:net';
import { MemoryCatalog } from '../../../src/catalog';
import { startGateway, type RunningGateway } from '../../../src/gateway';
import { Cleanup } from './helpers/common';
import {
  exchange,
  finals,
  header,
  splitMessages,
  startLoggingUpstream,
  status,
  type LoggingUpstream,
  type WireMessage,
} from './helpers/wire';

const TOKEN_1 = 'kept-fields-token-one';
const TOKEN_2 = 'kept-fields-token-two';
const cleanup = new Cleanup();
afterEach(() => cleanup.run());

async function upstream(): Promise<LoggingUpstream> {
  const u = await startLoggingUpstream();
  cleanup.add(() => u.close());
  return u;
}

async function gatewayFor(sb1: LoggingUpstream, sb2: LoggingUpstream): Promise<RunningGateway> {
  const catalog = new MemoryCatalog([
    { sandboxID: 'sb1', host: '127.0.0.1', agentPort: sb1.port, token: TOKEN_1 },
    { sandboxID: 'sb2', host: '127.0.0.1', agentPort: sb2.port, token: TOKEN_2 },
  ]);
  const gateway = await startGateway({ catalog });
  cleanup.add(() => gateway.close(100));
  return gateway;
}

/** A call with the fields an SDK sends on every call; only the path, the body and its length differ. */
const call = (path: string, body: string, o: { sandbox?: string; token?: string; lengthName?: string; length?: string } = {}) =>
  `POST ${path} HTTP/1.1\r\nHost: gateway.test\r\nContent-Type: application/json\r\nSvc-Sandbox-Id: ${o.sandbox ?? 'sb1'}\r\n` +
  `X-Access-Token: ${o.token ?? TOKEN_1}\r\n${o.lengthName ?? 'Content-Length'}: ${o.length ?? body.length}\r\nUser-Agent: kept-test\r\n\r\n${body}`;

/** Sends each call once the answer to the one before it has arrived (each head in a read of its own). */
async function oneByOne(port: number, calls: string[]): Promise<WireMessage[]> {
  const socket = connect(port, '127.0.0.1');
  cleanup.add(() => socket.destroy());
  let bytes = Buffer.alloc(0);
  let wake: (() => void) | undefined;
  socket.on('data', (d: Buffer) => {
    bytes = Buffer.concat([bytes, d]);
    wake?.();
  });
  socket.on('error', () => {});
  const answers = () => splitMessages(bytes, { responses: true, partialOk: true });
  for (let k = 0; k < calls.length; k++) {
    socket.write(calls[k]);
    const until = Date.now() + 10_000;
    while (answers().length <= k && Date.now() < until)
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, 50);
      });
  }
  return answers();
}

/** The requests one sandbox received, as [start line, Content-Length, token, body]. */
const received = (u: LoggingUpstream) =>
  u.messages().map((m) => [m.startLine, header(m, 'content-length')[0], header(m, 'x-access-token')[0], m.body.toString()]);

describe('repeated request fields', () => {
  it('calls that repeat their fields each reach the sandbox with their own target, Content-Length and body', async () => {
    const [sb1, sb2] = [await upstream(), await upstream()];
    const gateway = await gatewayFor(sb1, sb2);
    const bodies = ['{"a":1}', '{"a":22}', '{"a":22}', '{"path":"/home/user/a-longer-path"}', ''];
    const answers = await oneByOne(
      gateway.port,
      bodies.map((b, k) => call(`/p${k}`, b)),
    );
    expect(answers.map(status)).toEqual([200, 200, 200, 200, 200]);
    expect(received(sb1)).toEqual(bodies.map((b, k) => [`POST /p${k} HTTP/1.1`, b === '' ? undefined : String(b.length), TOKEN_1, b]));
    expect(sb2.messages()).toEqual([]);
  });

  it('a Content-Length written with leading zeros reaches the sandbox as the client wrote it', async () => {
    const [sb1, sb2] = [await upstream(), await upstream()];
    const gateway = await gatewayFor(sb1, sb2);
    await oneByOne(gateway.port, [call('/a', '{"a":1}'), call('/b', '{"a":1}', { length: '007' })]);
    expect(received(sb1).map((r) => [r[0], r[3]])).toEqual([
      ['POST /a HTTP/1.1', '{"a":1}'],
      ['POST /b HTTP/1.1', '{"a":1}'],
    ]);
    expect(sb1.seen.map((s) => s.body.length)).toEqual([7, 7]);
  });

  it('the same fields with a wrong token of the same length, after an accepted call: 401, and nothing reaches the sandbox', async () => {
    const [sb1, sb2] = [await upstream(), await upstream()];
    const gateway = await gatewayFor(sb1, sb2);
    const wrong = `${TOKEN_1.slice(0, -1)}X`;
    // One after the other, and pipelined in one write.
    const answers = await oneByOne(gateway.port, [call('/ok', '{}'), call('/stolen', '{}', { token: wrong })]);
    expect(answers.map(status)).toEqual([200, 401]);
    const piped = await exchange(gateway.port, [call('/ok', '{}') + call('/stolen', '{}', { token: wrong })], ['POST', 'POST']);
    expect(finals(piped).map(status)).toEqual([200, 401]);
    expect(sb1.seen.map((s) => s.url)).toEqual(['/ok', '/ok']);
  });

  it('the same fields naming another sandbox go to that sandbox, with its own token; pipelined calls keep their own fields', async () => {
    const [sb1, sb2] = [await upstream(), await upstream()];
    const gateway = await gatewayFor(sb1, sb2);
    const calls = [
      call('/one', '{"n":1}'),
      call('/two', '{"n":2}', { sandbox: 'sb2', token: TOKEN_2 }),
      call('/one-again', '{"n":3}'),
      // sb2's ID with sb1's token: refused, whatever came before on the connection.
      call('/cross', '{"n":4}', { sandbox: 'sb2' }),
    ];
    const piped = await exchange(gateway.port, calls.join(''), ['POST', 'POST', 'POST', 'POST']);
    expect(finals(piped).map(status)).toEqual([200, 200, 200, 401]);
    const sequential = await oneByOne(gateway.port, calls);
    expect(sequential.map(status)).toEqual([200, 200, 200, 401]);
    const one = ['POST /one HTTP/1.1', '7', TOKEN_1, '{"n":1}'];
    const oneAgain = ['POST /one-again HTTP/1.1', '7', TOKEN_1, '{"n":3}'];
    expect(received(sb1)).toEqual([one, oneAgain, one, oneAgain]);
    const two = ['POST /two HTTP/1.1', '7', TOKEN_2, '{"n":2}'];
    expect(received(sb2)).toEqual([two, two]);
  });

  it("a head that differs from the kept one only in a name's case is forwarded with its own spelling", async () => {
    const [sb1, sb2] = [await upstream(), await upstream()];
    const gateway = await gatewayFor(sb1, sb2);
    const answers = await oneByOne(gateway.port, [
      call('/a', '{}'),
      call('/b', '{}').replace('User-Agent', 'user-agent'),
      call('/c', '{}', { lengthName: 'content-length' }),
    ]);
    expect(answers.map(status)).toEqual([200, 200, 200]);
    const messages = sb1.messages();
    expect(messages.map((m) => m.headers.find(([n]) => n.toLowerCase() === 'user-agent'))).toEqual([
      ['User-Agent', 'kept-test'],
      ['user-agent', 'kept-test'],
      ['User-Agent', 'kept-test'],
    ]);
    expect(messages.map((m) => m.body.toString())).toEqual(['{}', '{}', '{}']);
  });
});
