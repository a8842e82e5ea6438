/**
 * AgentClient.waitForHealth against real sockets on loopback: it waits while nothing listens, answers once the agent
 * answers 2xx, and does not take a TCP handshake (a frozen sandbox's kernel still completes one) or an error status
 * for an answer.
 */
import * as http from 'node:http';
import * as net from 'node:net';
import { AgentCallError, AgentClient } from '../../../../src/platform/sandboxes/agent-client';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A port nothing listens on (yet): taken, then released. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function listen(server: net.Server, port: number): Promise<void> {
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
}

/** An agent whose /health answers `statuses` in turn (the last one from then on); counts the requests. */
function agent(statuses: number[]): { server: http.Server; requests: () => number } {
  let n = 0;
  const server = http.createServer((req, res) => {
    const status = statuses[Math.min(n++, statuses.length - 1)]!;
    res.writeHead(req.url === '/health' ? status : 404).end();
  });
  server.keepAliveTimeout = 1;
  return { server, requests: () => n };
}

test('waits while the port refuses connections, then answers once the agent listens and says 204', async () => {
  const port = await freePort();
  const { server, requests } = agent([204]);
  const started = Date.now();
  const waiting = new AgentClient(`http://127.0.0.1:${port}`).waitForHealth(5000);
  await new Promise((resolve) => setTimeout(resolve, 150));
  await listen(server, port);
  await waiting;
  expect(Date.now() - started).toBeGreaterThanOrEqual(150);
  // Refused attempts never reached HTTP: the one request is the answer.
  expect(requests()).toBe(1);
});

test('an agent answering 503 is asked again until it says 204', async () => {
  const port = await freePort();
  const { server, requests } = agent([503, 503, 204]);
  await listen(server, port);
  await new AgentClient(`http://127.0.0.1:${port}`).waitForHealth(5000);
  expect(requests()).toBe(3);
});

test('a TCP handshake without an HTTP answer (a frozen sandbox) is not health: the wait fails at its deadline', async () => {
  const port = await freePort();
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await listen(server, port);
  closers.unshift(async () => {
    for (const socket of sockets) socket.destroy();
  });
  await expect(new AgentClient(`http://127.0.0.1:${port}`).waitForHealth(1500)).rejects.toThrow(AgentCallError);
  expect(sockets.size).toBeGreaterThan(0);
});

test('nothing ever listening: the wait fails at its deadline and says the connection was refused', async () => {
  const port = await freePort();
  const started = Date.now();
  await expect(new AgentClient(`http://127.0.0.1:${port}`).waitForHealth(300)).rejects.toThrow(
    /did not answer GET \/health within 300 ms \(.*ECONNREFUSED/,
  );
  expect(Date.now() - started).toBeGreaterThanOrEqual(300);
});
