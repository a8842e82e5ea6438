/**
 * The lab internet's what-is-my-IP service: tells each client the source address it sees. HTTP answers in plain
 * text (`GET /`) or JSON (`GET /json`); the UDP echo answers each datagram with the sender's address. Run:
 *
 *   node whoami.js --http HOST:PORT [--udp HOST:PORT] [--name NAME]
 */
import { createSocket } from 'node:dgram';
import { createServer, type Server } from 'node:http';
import { parseArgs } from 'node:util';

export function parseHostPort(text: string, flag: string): { host: string; port: number } {
  const m = /^(\d{1,3}(?:\.\d{1,3}){3}):(\d{1,5})$/.exec(text);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port < 1 || port > 65535) throw new Error(`${flag}: expected IPv4:PORT such as 203.0.113.1:80, got ${JSON.stringify(text)}`);
  return { host: m[1]!, port };
}

/** The peer's IPv4 address as a client would want to read it (no IPv4-mapped IPv6 prefix). */
export function peerAddress(address: string | undefined): string {
  return (address ?? 'unknown').replace(/^::ffff:/, '');
}

export function whoamiHttp(name: string): Server {
  return createServer((req, res) => {
    const address = peerAddress(req.socket.remoteAddress);
    if (req.url === '/json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`${JSON.stringify({ address, port: req.socket.remotePort, service: name })}\n`);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`${address}\n`);
  });
}

if (require.main === module) {
  const { values } = parseArgs({
    options: { http: { type: 'string' }, udp: { type: 'string' }, name: { type: 'string', default: 'whoami' } },
  });
  if (!values.http) {
    process.stderr.write('usage: whoami --http HOST:PORT [--udp HOST:PORT] [--name NAME]\n');
    process.exit(2);
  }
  const http = parseHostPort(values.http, '--http');
  whoamiHttp(values.name!).listen(http.port, http.host, () => process.stdout.write(`whoami http on ${values.http}\n`));
  if (values.udp) {
    const udp = parseHostPort(values.udp, '--udp');
    const socket = createSocket('udp4');
    socket.on('message', (_msg, rinfo) => socket.send(`${rinfo.address}\n`, rinfo.port, rinfo.address));
    socket.bind(udp.port, udp.host, () => process.stdout.write(`whoami udp on ${values.udp}\n`));
  }
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0));
}
