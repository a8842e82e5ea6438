/**
 * Raw-socket cases against a byte-logging sandbox service: every request the gateway forwards is framed exactly
 * once (the recorded bytes split strictly into the requests the client sent, no more), and the client always gets
 * the sandbox's answer or the gateway's documented error.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { MemoryCatalog } from '../../../src/catalog';
import { startGateway, type GatewayOptions, type RunningGateway } from '../../../src/gateway';
import { Cleanup } from './helpers/common';
import {
  exchange,
  finals,
  header,
  oneChunk,
  startEarlyAnswerUpstream,
  startLoggingUpstream,
  status,
  type LoggingUpstream,
} from './helpers/wire';

const TOKEN = 'framing-test-token';
const SMUGGLED = 'GET /SMUGGLED HTTP/1.1\r\nHost: x\r\n\r\n';
const cleanup = new Cleanup();
afterEach(() => cleanup.run());

async function gatewayFor(upstreamPort: number, options: Partial<GatewayOptions> = {}): Promise<RunningGateway> {
  const catalog = new MemoryCatalog([{ sandboxID: 'sb1', host: '127.0.0.1', agentPort: upstreamPort, token: TOKEN }]);
  const gateway = await startGateway({ catalog, ...options });
  cleanup.add(() => gateway.close(100));
  return gateway;
}

async function loggingUpstream(answer?: Parameters<typeof startLoggingUpstream>[0]): Promise<LoggingUpstream> {
  const upstream = await startLoggingUpstream(answer);
  cleanup.add(() => upstream.close());
  return upstream;
}

const head = (method: string, path: string, extra: string[] = [], token = TOKEN) =>
  `${method} ${path} HTTP/1.1\r\nHost: gateway.test\r\nSvc-Sandbox-Id: sb1\r\nX-Access-Token: ${token}\r\n${extra.map((h) => `${h}\r\n`).join('')}\r\n`;

const METHODS = ['GET', 'HEAD', 'DELETE', 'OPTIONS', 'TRACE', 'POST', 'PUT', 'PATCH'];
const body = (m: { body: Buffer }) => JSON.parse(m.body.toString());

/** The upstream log, split strictly: throws if any request is not framed exactly once. Sorted by start line. */
function forwarded(upstream: LoggingUpstream) {
  return upstream.messages().sort((a, b) => a.startLine.localeCompare(b.startLine));
}

/**
 * What the sandbox's HTTP server parsed, sorted: the gateway forwards the pipelined requests of one client
 * connection concurrently (possibly on different upstream connections), so only the set is fixed.
 */
const seen = (upstream: LoggingUpstream) => upstream.seen.map((r) => `${r.method} ${r.url}`).sort();
const seenBody = (upstream: LoggingUpstream, url: string) => upstream.seen.find((r) => r.url === url)?.body;

describe('bodies are forwarded framed exactly once, whatever the method', () => {
  const variants: [string, string[]][] = [
    ['', []],
    [' and Connection: close', ['Connection: close']],
    [' and Expect: 100-continue', ['Expect: 100-continue']],
    [' and Connection: transfer-encoding', ['Connection: transfer-encoding']],
  ];
  const cases = METHODS.flatMap((method) => variants.map(([label, extra]) => [method, label, extra] as const));

  it.each(cases)(
    '%s with a chunked body%s: one request upstream, the body framed, the next request still in step',
    async (method, _label, extra) => {
      const upstream = await loggingUpstream();
      const gateway = await gatewayFor(upstream.port);
      const closes = extra.includes('Connection: close');
      const second = closes ? [] : [head('GET', '/second')];
      const x = await exchange(
        gateway.port,
        [head(method, '/outer', ['Transfer-Encoding: chunked', ...extra]) + oneChunk(SMUGGLED).toString('latin1'), ...second],
        closes ? [method] : [method, 'GET'],
      );

      const answers = finals(x);
      expect(answers.map(status)).toEqual(closes ? [200] : [200, 200]);
      if (method !== 'HEAD') expect(body(answers[0])).toEqual({ method, url: '/outer', bodyLength: SMUGGLED.length });
      if (!closes) expect(body(answers[1])).toMatchObject({ method: 'GET', url: '/second', bodyLength: 0 });

      expect(seen(upstream)).toEqual((closes ? [`${method} /outer`] : [`${method} /outer`, 'GET /second']).sort());
      expect(seenBody(upstream, '/outer')?.toString('latin1')).toBe(SMUGGLED);
      const wire = forwarded(upstream);
      expect(wire.map((m) => m.startLine)).toEqual(seen(upstream).map((r) => `${r} HTTP/1.1`));
      const outer = wire.find((m) => m.startLine.includes('/outer'));
      expect(outer?.framing).not.toBe('none');
      expect(outer?.body.toString('latin1')).toBe(SMUGGLED);
      expect(outer && header(outer, 'expect')).toEqual([]);
    },
  );

  it.each(METHODS)('%s with a Content-Length body listed in Connection: the length is still sent', async (method) => {
    const upstream = await loggingUpstream();
    const gateway = await gatewayFor(upstream.port);
    const x = await exchange(
      gateway.port,
      [
        head(method, '/outer', [`Content-Length: ${SMUGGLED.length}`, 'Connection: content-length, keep-alive']) + SMUGGLED,
        head('GET', '/second'),
      ],
      [method, 'GET'],
    );
    expect(finals(x).map(status)).toEqual([200, 200]);
    expect(seen(upstream)).toEqual([`${method} /outer`, 'GET /second'].sort());
    const outer = forwarded(upstream).find((m) => m.startLine.includes('/outer'));
    expect(outer?.framing).toBe('length');
    expect(outer?.body.toString('latin1')).toBe(SMUGGLED);
  });

  it('pipelined heads read by the scanner and by llhttp in turn: bodies that look like requests stay bodies', async () => {
    // Plain heads go through the gateway's own scanner, chunked and Connection-listing ones through llhttp, which is
    // started afresh after a head with a length; every body here is a request head itself.
    const upstream = await loggingUpstream();
    const gateway = await gatewayFor(upstream.port);
    const withLength = (path: string, extra: string[] = []) =>
      head('POST', path, [`Content-Length: ${SMUGGLED.length}`, ...extra]) + SMUGGLED;
    const requests = [
      withLength('/scanned-1'),
      head('POST', '/chunked', ['Transfer-Encoding: chunked']) + oneChunk(SMUGGLED).toString('latin1'),
      head('GET', '/after-chunked'),
      withLength('/listed', ['Connection: keep-alive, x-hop']),
      withLength('/scanned-2'),
      head('GET', '/last'),
    ];
    const x = await exchange(gateway.port, requests.join(''), ['POST', 'POST', 'GET', 'POST', 'POST', 'GET']);
    expect(finals(x).map(status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(seen(upstream)).toEqual(
      ['POST /scanned-1', 'POST /chunked', 'GET /after-chunked', 'POST /listed', 'POST /scanned-2', 'GET /last'].sort(),
    );
    for (const path of ['/scanned-1', '/chunked', '/listed', '/scanned-2'])
      expect(seenBody(upstream, path)?.toString('latin1')).toBe(SMUGGLED);
    expect(forwarded(upstream).map((m) => m.startLine.split(' ')[1])).not.toContain('/SMUGGLED');
  });

  it.each(METHODS)('%s carries bodies of 0, 1 and 70,000 bytes intact, by Content-Length and chunked', async (method) => {
    const upstream = await loggingUpstream();
    const gateway = await gatewayFor(upstream.port);
    const big = Buffer.alloc(70_000, 'b');
    const requests = [
      Buffer.from(head(method, '/empty', ['Content-Length: 0'])),
      Buffer.concat([Buffer.from(head(method, '/one', ['Content-Length: 1'])), Buffer.from('x')]),
      Buffer.concat([Buffer.from(head(method, '/big', [`Content-Length: ${big.length}`])), big]),
      Buffer.concat([Buffer.from(head(method, '/big-chunked', ['Transfer-Encoding: chunked'])), oneChunk(big)]),
      Buffer.concat([Buffer.from(head(method, '/empty-chunked', ['Transfer-Encoding: chunked'])), Buffer.from('0\r\n\r\n')]),
      Buffer.from(head(method, '/none')),
    ];
    const x = await exchange(
      gateway.port,
      requests,
      requests.map(() => method),
    );
    expect(finals(x).map(status)).toEqual(requests.map(() => 200));
    const expected: [string, number][] = [
      ['/big', big.length],
      ['/big-chunked', big.length],
      ['/empty', 0],
      ['/empty-chunked', 0],
      ['/none', 0],
      ['/one', 1],
    ];
    expect(upstream.seen.map((r) => [r.url, r.body.length]).sort(([a], [b]) => String(a).localeCompare(String(b)))).toEqual(expected);
    expect(seenBody(upstream, '/big')?.equals(big)).toBe(true);
    expect(seenBody(upstream, '/big-chunked')?.equals(big)).toBe(true);
    expect(forwarded(upstream).map((m) => [m.startLine.split(' ')[1], m.body.length])).toEqual(expected);
  });
});

describe('ambiguous framing is refused with 400 and never reaches the sandbox', () => {
  const shapes: [string, string[], string][] = [
    ['Content-Length with Transfer-Encoding', ['Content-Length: 5', 'Transfer-Encoding: chunked'], '5\r\nhello\r\n0\r\n\r\n'],
    ['Transfer-Encoding with Content-Length', ['Transfer-Encoding: chunked', 'Content-Length: 5'], '5\r\nhello\r\n0\r\n\r\n'],
    ['two equal Content-Length fields', ['Content-Length: 5', 'Content-Length: 5'], 'hello'],
    ['two different Content-Length fields', ['Content-Length: 5', 'Content-Length: 6'], 'hello!'],
    ['a Content-Length list', ['Content-Length: 5, 5'], 'hello'],
    ['a Transfer-Encoding other than chunked', ['Transfer-Encoding: gzip'], 'hello'],
    ['chunked not last', ['Transfer-Encoding: chunked, gzip'], '5\r\nhello\r\n0\r\n\r\n'],
  ];

  it.each(shapes)('%s', async (_name, extra, payload) => {
    const upstream = await loggingUpstream();
    const gateway = await gatewayFor(upstream.port);
    const x = await exchange(gateway.port, head('POST', '/ambiguous', extra) + payload + SMUGGLED, ['POST']);
    const answers = finals(x);
    expect(answers.map(status)).toEqual([400]);
    expect(header(answers[0], 'connection')).toEqual(['close']);
    expect(upstream.connections).toEqual([]);
  });
});

describe('early answers from the sandbox reach the client', () => {
  const sizes = [64 * 1024, 256 * 1024, 1024 * 1024];
  const ways = ['end', 'destroy'] as const;
  const cases = ways.flatMap((how) =>
    sizes.flatMap((size) => (['length', 'chunked'] as const).map((framing) => [how, size, framing] as const)),
  );

  it.each(cases)('answer then %s, %d-byte body by %s: the client gets the 429 (5 times)', async (how, size, framing) => {
    const upstream = await startEarlyAnswerUpstream(how);
    cleanup.add(() => upstream.close());
    const gateway = await gatewayFor(upstream.port);
    const payload = Buffer.alloc(size, 'p');
    const request =
      framing === 'length'
        ? Buffer.concat([Buffer.from(head('POST', '/upload', [`Content-Length: ${size}`])), payload])
        : Buffer.concat([Buffer.from(head('POST', '/upload', ['Transfer-Encoding: chunked'])), oneChunk(payload)]);
    for (let i = 0; i < 5; i++) {
      const x = await exchange(gateway.port, request, ['POST']);
      const answers = finals(x);
      expect(answers.map(status)).toEqual([429]);
      expect(body(answers[0])).toEqual({ code: 'resource_exhausted', message: 'request body too large' });
    }
  });

  it.each(cases)(
    'answer then %s, %d-byte body by %s: the client connection stays in step for its next request',
    async (how, size, framing) => {
      const upstream = await startEarlyAnswerUpstream(how);
      cleanup.add(() => upstream.close());
      const gateway = await gatewayFor(upstream.port);
      const payload = Buffer.alloc(size, 'p');
      const first =
        framing === 'length'
          ? Buffer.concat([Buffer.from(head('POST', '/upload', [`Content-Length: ${size}`])), payload])
          : Buffer.concat([Buffer.from(head('POST', '/upload', ['Transfer-Encoding: chunked'])), oneChunk(payload)]);
      const x = await exchange(gateway.port, [first, head('POST', '/next', ['Content-Length: 0'])], ['POST', 'POST']);
      expect(finals(x).map(status)).toEqual([429, 429]);
      // The second answer is for the second request: the upstream saw its head on a connection of its own.
      expect(upstream.messages().map((m) => m.startLine)).toContain('POST /next HTTP/1.1');
    },
  );

  it.each(sizes)(
    'a node:http service answering 413 with Connection: close before reading a %d-byte body is passed through',
    async (size) => {
      const service = createServer((req, res) => {
        req.resume();
        res.writeHead(413, { 'content-type': 'text/plain', connection: 'close' });
        res.end('too large');
      });
      await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
      cleanup.add(
        () =>
          new Promise<void>((resolve) => {
            service.closeAllConnections();
            service.close(() => resolve());
          }),
      );
      const gateway = await gatewayFor((service.address() as { port: number }).port);
      for (let i = 0; i < 5; i++) {
        const x = await exchange(
          gateway.port,
          Buffer.concat([Buffer.from(head('PUT', '/upload', [`Content-Length: ${size}`])), Buffer.alloc(size, 'q')]),
          ['PUT'],
        );
        expect(finals(x).map(status)).toEqual([413]);
        expect(finals(x)[0].body.toString()).toBe('too large');
      }
    },
  );
});

describe('Connect-Timeout-Ms', () => {
  async function slowUpstream(delayMs: number) {
    return loggingUpstream((_req, res) => {
      setTimeout(() => res.end('slow answer'), delayMs);
    });
  }

  it.each(['2147483647', '2147483648', '4294967296', '9999999999'])(
    '%s (at and above 2^31-1) is a long deadline, not an instant 504',
    async (value) => {
      const upstream = await slowUpstream(300);
      const gateway = await gatewayFor(upstream.port);
      const x = await exchange(gateway.port, head('POST', '/slow', ['Content-Length: 0', `Connect-Timeout-Ms: ${value}`]), ['POST']);
      expect(finals(x).map(status)).toEqual([200]);
      expect(finals(x)[0].body.toString()).toBe('slow answer');
      // Forwarded unchanged: the sandbox applies the same deadline.
      expect(header(forwarded(upstream)[0], 'connect-timeout-ms')).toEqual([value]);
    },
  );

  it('a deadline shorter than the answer ends the call with 504 naming it', async () => {
    const upstream = await slowUpstream(1000);
    const gateway = await gatewayFor(upstream.port);
    const x = await exchange(gateway.port, head('POST', '/slow', ['Content-Length: 0', 'Connect-Timeout-Ms: 100']), ['POST']);
    expect(finals(x).map(status)).toEqual([504]);
    expect(body(finals(x)[0])).toMatchObject({ sandboxID: 'sb1', code: 504, message: expect.stringContaining('within 100 ms') });
  });

  it.each(['0', '-1', '1.5', '12345678901', 'soon', ''])(
    '%j is refused with 400 naming the header and the rule; the sandbox is not contacted',
    async (value) => {
      const upstream = await loggingUpstream();
      const gateway = await gatewayFor(upstream.port);
      const x = await exchange(gateway.port, head('POST', '/x', ['Content-Length: 0', `Connect-Timeout-Ms: ${value}`]), ['POST']);
      expect(finals(x).map(status)).toEqual([400]);
      expect(body(finals(x)[0]).message).toMatch(/Connect-Timeout-Ms .* positive integer of at most 10 digits/);
      expect(upstream.connections).toEqual([]);
    },
  );
});

describe('access tokens on the wire', () => {
  it('answers a non-ASCII token with 401 saying what tokens are, and keeps serving', async () => {
    const upstream = await loggingUpstream();
    const gateway = await gatewayFor(upstream.port);
    // The token's tail is UTF-8 bytes above 0x7f, as a client would send "tökén".
    const request = Buffer.concat([
      Buffer.from(`POST /x HTTP/1.1\r\nHost: g\r\nSvc-Sandbox-Id: sb1\r\nContent-Length: 0\r\nX-Access-Token: t`),
      Buffer.from('ökén', 'utf8'),
      Buffer.from('\r\n\r\n'),
    ]);
    const x = await exchange(gateway.port, [request, head('POST', '/after', ['Content-Length: 0'])], ['POST', 'POST']);
    const answers = finals(x);
    expect(answers.map(status)).toEqual([401, 200]);
    expect(body(answers[0]).message).toContain('visible ASCII');
    expect(seen(upstream)).toEqual(['POST /after']);
  });
});

describe('listen backlog', () => {
  it('is the configured length, as the kernel reports it for the listening socket', async () => {
    const somaxconn = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8').trim());
    const wanted = Math.min(1234, somaxconn);
    const gateway = await gatewayFor(1, { limits: { listenBacklog: wanted } });
    // For a listening socket, ss reports the backlog as Send-Q.
    const line = execFileSync('ss', ['-Hltn', `sport = :${gateway.port}`], { encoding: 'utf8' }).trim();
    expect(line.split(/\s+/)[2]).toBe(String(wanted));
  });

  it('defaults to 4096 (or the kernel cap below it)', async () => {
    const somaxconn = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8').trim());
    const gateway = await gatewayFor(1);
    const line = execFileSync('ss', ['-Hltn', `sport = :${gateway.port}`], { encoding: 'utf8' }).trim();
    expect(line.split(/\s+/)[2]).toBe(String(Math.min(4096, somaxconn)));
  });
});

describe('heads the parser must not guess at are refused before anything reaches a sandbox', () => {
  const shapes: [string, string][] = [
    [
      'a folded header line (obs-fold)',
      `POST /folded HTTP/1.1\r\nHost: g\r\nSvc-Sandbox-Id: sb1\r\nX-Access-Token: ${TOKEN}\r\nX-Long: a\r\n b\r\nContent-Length: 0\r\n\r\n`,
    ],
    ['bare LF line ends', `POST /bare-lf HTTP/1.1\nHost: g\nSvc-Sandbox-Id: sb1\nX-Access-Token: ${TOKEN}\nContent-Length: 0\n\n`],
    [
      'a bare LF inside the head',
      `POST /bare-lf HTTP/1.1\r\nHost: g\nSvc-Sandbox-Id: sb1\r\nX-Access-Token: ${TOKEN}\r\nContent-Length: 0\r\n\r\n`,
    ],
    [
      'a space before the colon',
      `POST /space HTTP/1.1\r\nHost: g\r\nSvc-Sandbox-Id: sb1\r\nX-Access-Token: ${TOKEN}\r\nContent-Length : 5\r\n\r\nhello`,
    ],
  ];

  it.each(shapes)('%s: 400, connection closed, the sandbox sees nothing', async (_name, bytes) => {
    const upstream = await loggingUpstream();
    const gateway = await gatewayFor(upstream.port);
    const x = await exchange(gateway.port, bytes + SMUGGLED, ['POST']);
    expect(finals(x).map(status)).toEqual([400]);
    expect(header(finals(x)[0], 'connection')).toEqual(['close']);
    expect(upstream.connections).toEqual([]);
  });

  it('a request after a valid one and a malformed one: the valid one is answered, then 400 and the connection closes', async () => {
    const upstream = await loggingUpstream();
    const gateway = await gatewayFor(upstream.port);
    const x = await exchange(gateway.port, head('GET', '/first') + 'NOT HTTP AT ALL\r\n\r\n' + head('GET', '/third'), ['GET', 'GET']);
    expect(finals(x).map(status)).toEqual([200, 400]);
    expect(header(finals(x)[1], 'connection')).toEqual(['close']);
    expect(seen(upstream)).toEqual(['GET /first']);
  });
});

describe('bytes after an upgrade head belong to that upgrade only', () => {
  it('a request pipelined behind an upgrade is never routed by the gateway: another sandbox sees nothing', async () => {
    const first = await loggingUpstream();
    const other = await loggingUpstream();
    const catalog = new MemoryCatalog([
      { sandboxID: 'sb1', host: '127.0.0.1', agentPort: first.port, token: TOKEN },
      { sandboxID: 'sb2', host: '127.0.0.1', agentPort: other.port, token: TOKEN },
    ]);
    const gateway = await startGateway({ catalog });
    cleanup.add(() => gateway.close(100));
    const upgrade = head('GET', '/ws', ['Connection: Upgrade', 'Upgrade: websocket']);
    const smuggled = `GET /to-sb2 HTTP/1.1\r\nHost: g\r\nSvc-Sandbox-Id: sb2\r\nX-Access-Token: ${TOKEN}\r\n\r\n`;
    // The sandbox's service takes no upgrade: it answers the head as a plain request, then reads on.
    await exchange(gateway.port, upgrade + smuggled, ['GET', 'GET'], 1000);
    expect(other.connections).toEqual([]);
    // Whatever followed went to sb1 only, on the upgrade's own connection, never a pooled one.
    expect(first.connections).toHaveLength(1);
  });
});

describe('HTTP/1.0 clients', () => {
  it('get an answer of unknown length delimited by the end of the connection, never chunked', async () => {
    const upstream = await loggingUpstream((_req, res) => {
      res.write('part one, ');
      res.end('part two');
    });
    const gateway = await gatewayFor(upstream.port);
    const request = `GET /old HTTP/1.0\r\nHost: g\r\nSvc-Sandbox-Id: sb1\r\nX-Access-Token: ${TOKEN}\r\n\r\n`;
    const x = await exchange(gateway.port, request, ['GET']);
    const answers = finals(x);
    expect(answers.map(status)).toEqual([200]);
    expect(header(answers[0], 'transfer-encoding')).toEqual([]);
    expect(answers[0].framing).toBe('close');
    expect(answers[0].body.toString()).toBe('part one, part two');
    expect(x.closed).toBe(true);
  });
});
