/**
 * A forward HTTP proxy for tests whose network namespace has no route out: absolute-form requests (what apt and curl
 * send to an `http_proxy`) are forwarded from this process's namespace, and CONNECT tunnels are opened. Listens on
 * one address of this namespace (a lab's host link), so only what is on that link can use it.
 */
import * as http from 'node:http';
import * as net from 'node:net';

export interface RunningHttpProxy {
  url: string;
  /** Requests and tunnels forwarded so far. */
  forwarded(): number;
  close(): Promise<void>;
}

export async function startHttpProxy(host: string): Promise<RunningHttpProxy> {
  let count = 0;
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('absolute-form request expected\n');
      return;
    }
    count++;
    const upstream = http.request(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502).end(`${err.message}\n`);
      else res.destroy();
    });
    req.pipe(upstream);
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const [name, port] = (req.url ?? '').split(':');
    count++;
    const upstream = net.connect(Number(port) || 443, name ?? '', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client).pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://${host}:${port}`,
    forwarded: () => count,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
