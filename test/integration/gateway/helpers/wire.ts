/**
 * Raw HTTP/1.1 on both sides of the gateway: a byte-logging upstream (every byte the gateway sends to a sandbox is
 * recorded per connection, then handed to a real HTTP server that answers) and a strict splitter that reads a
 * recorded byte stream back into messages, failing on anything that is not framed exactly once.
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface WireMessage {
  /** `GET /x HTTP/1.1` or `HTTP/1.1 200 OK` */
  startLine: string;
  headers: [string, string][];
  framing: 'none' | 'length' | 'chunked' | 'close';
  body: Buffer;
}

export function header(message: WireMessage, name: string): string[] {
  return message.headers.filter(([n]) => n.toLowerCase() === name.toLowerCase()).map(([, v]) => v);
}

const HEAD_END = Buffer.from('\r\n\r\n');

/**
 * Splits a byte stream into HTTP/1.1 messages. Requests: a body is delimited by exactly one Content-Length or one
 * `Transfer-Encoding: chunked`, never both; without either there is no body, so any further bytes must parse as the
 * next request. Responses (`responses: true`): also close-delimited; HEAD answers and 1xx/204/304 have no body
 * (`methods` gives the request method of each response in order). Throws naming the first violation.
 */
export function splitMessages(
  bytes: Buffer,
  options: { responses?: boolean; methods?: string[]; partialOk?: boolean } = {},
): WireMessage[] {
  const out: WireMessage[] = [];
  let at = 0;
  let finalIndex = 0;
  while (at < bytes.length) {
    const end = bytes.indexOf(HEAD_END, at);
    if (end < 0) {
      if (options.partialOk) return out;
      throw new Error(
        `bytes after message ${out.length} do not form a message head: ${JSON.stringify(bytes.subarray(at, at + 80).toString('latin1'))}`,
      );
    }
    const lines = bytes.subarray(at, end).toString('latin1').split('\r\n');
    const startLine = lines[0];
    const startPattern = options.responses ? /^HTTP\/1\.[01] [0-9]{3}( .*)?$/ : /^[A-Z]+ \S+ HTTP\/1\.[01]$/;
    if (!startPattern.test(startLine)) throw new Error(`message ${out.length}: malformed start line ${JSON.stringify(startLine)}`);
    const headers: [string, string][] = lines.slice(1).map((line) => {
      const colon = line.indexOf(':');
      if (colon <= 0) throw new Error(`message ${out.length}: malformed header line ${JSON.stringify(line)}`);
      return [line.slice(0, colon), line.slice(colon + 1).trim()];
    });
    at = end + 4;
    const lengths = headers.filter(([n]) => n.toLowerCase() === 'content-length');
    const encodings = headers.filter(([n]) => n.toLowerCase() === 'transfer-encoding');
    if (lengths.length > 0 && encodings.length > 0)
      throw new Error(`message ${out.length} (${startLine}) has both Content-Length and Transfer-Encoding`);
    if (lengths.length > 1) throw new Error(`message ${out.length} (${startLine}) has ${lengths.length} Content-Length fields`);
    if (encodings.length > 1) throw new Error(`message ${out.length} (${startLine}) has ${encodings.length} Transfer-Encoding fields`);
    if (encodings.length === 1 && encodings[0][1].toLowerCase() !== 'chunked')
      throw new Error(`message ${out.length} has Transfer-Encoding ${encodings[0][1]}`);

    const status = options.responses ? Number(startLine.split(' ')[1]) : 0;
    const interim = options.responses && status >= 100 && status < 200;
    const method = options.responses ? options.methods?.[finalIndex] : undefined;
    const bodiless = options.responses && (interim || status === 204 || status === 304 || method === 'HEAD');
    if (!interim) finalIndex++;

    let framing: WireMessage['framing'] = 'none';
    let body: Buffer = Buffer.alloc(0);
    if (bodiless) {
      framing = 'none';
    } else if (lengths.length === 1) {
      if (!/^[0-9]+$/.test(lengths[0][1])) throw new Error(`message ${out.length}: Content-Length ${lengths[0][1]}`);
      const n = Number(lengths[0][1]);
      if (at + n > bytes.length) {
        if (options.partialOk) return out;
        throw new Error(`message ${out.length} (${startLine}) announces ${n} bytes, ${bytes.length - at} follow`);
      }
      framing = 'length';
      body = bytes.subarray(at, at + n);
      at += n;
    } else if (encodings.length === 1) {
      framing = 'chunked';
      const parts: Buffer[] = [];
      for (;;) {
        const lineEnd = bytes.indexOf('\r\n', at);
        if (lineEnd < 0) {
          if (options.partialOk) return out;
          throw new Error(`message ${out.length}: chunked body ends early`);
        }
        const size = Number.parseInt(bytes.subarray(at, lineEnd).toString('latin1').split(';')[0], 16);
        if (!Number.isFinite(size)) throw new Error(`message ${out.length}: bad chunk size line`);
        at = lineEnd + 2;
        if (size === 0) {
          // Trailers, then the empty line.
          const trailersEnd = bytes.indexOf('\r\n', at);
          if (trailersEnd !== at) {
            const t = bytes.indexOf(HEAD_END, at - 2);
            if (t < 0) throw new Error(`message ${out.length}: unterminated trailers`);
            at = t + 4;
          } else {
            at += 2;
          }
          break;
        }
        if (at + size + 2 > bytes.length) {
          if (options.partialOk) return out;
          throw new Error(`message ${out.length}: chunk of ${size} bytes ends early`);
        }
        parts.push(bytes.subarray(at, at + size));
        at += size + 2;
      }
      body = Buffer.concat(parts);
    } else if (options.responses) {
      framing = 'close';
      body = bytes.subarray(at);
      at = bytes.length;
    }
    out.push({ startLine, headers, framing, body });
  }
  return out;
}

export interface SeenRequest {
  method: string;
  url: string;
  body: Buffer;
}

export interface LoggingUpstream {
  port: number;
  /** Every byte the gateway sent, per upstream connection, in order. */
  connections: Buffer[][];
  /** The requests the real HTTP server behind the log parsed, in order. */
  seen: SeenRequest[];
  /** All recorded bytes, split strictly connection by connection. */
  messages(): WireMessage[];
  close(): Promise<void>;
}

/**
 * A sandbox service whose every received byte is logged: a TCP tap in front of a node:http server. By default the
 * server reads each whole request and answers 200 with JSON naming method, path and body length; `answer` replaces
 * that behaviour.
 */
export async function startLoggingUpstream(
  answer?: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void,
): Promise<LoggingUpstream> {
  const seen: SeenRequest[] = [];
  const http = createHttpServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = Buffer.concat(parts);
      seen.push({ method: req.method ?? '', url: req.url ?? '', body });
      if (answer) return answer(req, res, body);
      const text = JSON.stringify({ method: req.method, url: req.url, bodyLength: body.length });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const httpPort = (http.address() as { port: number }).port;
  return tap(httpPort, seen, () => {
    http.closeAllConnections();
    return new Promise<void>((resolve) => http.close(() => resolve()));
  });
}

/**
 * A sandbox service that answers as soon as a request head has arrived, without reading the body, then closes:
 * `end` half-closes and keeps reading (what a careful server does), `destroy` drops the connection at once (what a
 * hasty one does; the kernel may then reset the connection while the gateway is still sending).
 */
export async function startEarlyAnswerUpstream(
  how: 'end' | 'destroy',
  status = 429,
  answerBody = '{"code":"resource_exhausted","message":"request body too large"}',
): Promise<LoggingUpstream> {
  const connections: Buffer[][] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    const log: Buffer[] = [];
    connections.push(log);
    let answered = false;
    socket.on('data', (chunk: Buffer) => {
      log.push(chunk);
      if (answered || Buffer.concat(log).indexOf(HEAD_END) < 0) return;
      answered = true;
      socket.write(
        `HTTP/1.1 ${status} Too Many Requests\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(answerBody)}\r\nconnection: close\r\n\r\n${answerBody}`,
      );
      if (how === 'end') socket.end();
      else socket.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    connections,
    seen: [],
    messages: () => connections.flatMap((c) => splitMessages(Buffer.concat(c), { partialOk: true })),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

async function tap(targetPort: number, seen: SeenRequest[], closeTarget: () => Promise<void>): Promise<LoggingUpstream> {
  const connections: Buffer[][] = [];
  const sockets = new Set<Socket>();
  const server = createServer((inbound) => {
    const log: Buffer[] = [];
    connections.push(log);
    const outbound = connect(targetPort, '127.0.0.1');
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        inbound.destroy();
        outbound.destroy();
      });
    }
    inbound.on('data', (chunk: Buffer) => {
      log.push(chunk);
      outbound.write(chunk);
    });
    inbound.on('end', () => outbound.end());
    outbound.pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    connections,
    seen,
    messages: () => connections.flatMap((c) => splitMessages(Buffer.concat(c))),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await closeTarget();
    },
  };
}

export interface RawExchange {
  responses: WireMessage[];
  /** Everything the gateway sent back, as bytes. */
  raw: Buffer;
  /** The gateway closed the connection. */
  closed: boolean;
}

/**
 * Sends bytes on one fresh connection to the gateway and reads answers until `expect` final responses have arrived
 * (1xx interim answers are kept but not counted), the gateway closes the connection, or `timeoutMs` passes.
 * `methods` lists the request method of each expected response (HEAD answers carry no body).
 */
export function exchange(
  port: number,
  bytes: Buffer | string | (Buffer | string)[],
  methods: string[],
  timeoutMs = 5000,
): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const parts: Buffer[] = [];
    let settled = false;
    const finish = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const raw = Buffer.concat(parts);
      try {
        resolve({ responses: splitMessages(raw, { responses: true, methods, partialOk: !closed }), raw, closed });
      } catch (err) {
        reject(err);
      }
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('data', (chunk: Buffer) => {
      parts.push(chunk);
      try {
        const finals = splitMessages(Buffer.concat(parts), { responses: true, methods, partialOk: true }).filter(
          (m) => !/^HTTP\/1\.[01] 1/.test(m.startLine),
        );
        if (finals.length >= methods.length && finals.every((m) => m.framing !== 'close')) finish(false);
      } catch {
        // Not complete yet, or malformed: decided on close.
      }
    });
    socket.on('connect', () => {
      for (const b of Array.isArray(bytes) ? bytes : [bytes]) socket.write(b);
    });
  });
}

export const status = (m: WireMessage) => Number(m.startLine.split(' ')[1]);

/** The final (non-1xx) responses of an exchange. */
export const finals = (x: RawExchange) => x.responses.filter((m) => status(m) >= 200);

/** A chunked body carrying `text` in one chunk. */
export const oneChunk = (text: string | Buffer) => {
  const b = Buffer.isBuffer(text) ? text : Buffer.from(text, 'latin1');
  return Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n0\r\n\r\n')]);
};
