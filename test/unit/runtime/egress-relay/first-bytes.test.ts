import * as net from 'node:net';
import * as tls from 'node:tls';
import { nameInFirstBytes } from '../../../../src/runtime/network/egress-relay/first-bytes';

/** The first bytes Node's own TLS client sends for `servername`: a real ClientHello. */
async function clientHello(servername: string | undefined): Promise<Buffer> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  const got = new Promise<Buffer>((resolve) =>
    server.once('connection', (s) => {
      s.once('data', (d: Buffer) => {
        resolve(d);
        s.destroy();
      });
    }),
  );
  const client = tls.connect({ host: '127.0.0.1', port, ...(servername ? { servername } : {}), rejectUnauthorized: false });
  client.on('error', () => {});
  const hello = await got;
  client.destroy();
  server.close();
  return hello;
}

describe('the name in the first bytes of a connection', () => {
  it('is the SNI of a TLS ClientHello, also when it arrives in pieces', async () => {
    const hello = await clientHello('api.example.com');
    expect(nameInFirstBytes(hello)).toEqual({ complete: true, name: 'api.example.com', protocol: 'tls' });
    expect(nameInFirstBytes(hello.subarray(0, 40))).toEqual({ complete: false });
    expect(nameInFirstBytes(hello.subarray(0, 3))).toEqual({ complete: false });
  });

  it('is none for a ClientHello without SNI', async () => {
    expect(nameInFirstBytes(await clientHello(undefined))).toEqual({ complete: true, name: undefined, protocol: 'tls' });
  });

  it('is the Host of an HTTP/1 request, without its port, once the head is complete', () => {
    const req = Buffer.from('GET / HTTP/1.1\r\nUser-Agent: x\r\nHost: Allowed.Example.com:8080\r\n\r\n');
    expect(nameInFirstBytes(req)).toEqual({ complete: true, name: 'Allowed.Example.com', protocol: 'http' });
    expect(nameInFirstBytes(req.subarray(0, 20))).toEqual({ complete: false });
    expect(nameInFirstBytes(Buffer.from('GE'))).toEqual({ complete: false });
  });

  it('is none for two Host headers, a request without one, and other protocols', () => {
    const two = Buffer.from('GET / HTTP/1.1\r\nHost: a.example.com\r\nHost: b.example.com\r\n\r\n');
    expect(nameInFirstBytes(two)).toMatchObject({ complete: true, name: undefined });
    expect(nameInFirstBytes(Buffer.from('GET / HTTP/1.0\r\n\r\n'))).toMatchObject({ complete: true, name: undefined });
    expect(nameInFirstBytes(Buffer.from('SSH-2.0-OpenSSH_9.2\r\n'))).toEqual({ complete: true, name: undefined, protocol: 'other' });
  });
});
