/**
 * The relay's side of `network.rules` (transform-rules.ts): a TLS connection whose SNI has a rule set is terminated
 * here with a leaf certificate for that name signed by the sandbox's own CA (egress-ca.ts; only http/1.1 offered),
 * its requests are cut apart (http-requests.ts, the same framing rules as every followed connection), each request
 * head gets the set's headers with its secret placeholders resolved by the platform at that moment, and the requests
 * go on over TLS to the real destination, whose certificate is verified for the name. A placeholder the platform
 * does not resolve (an unknown secret, another team's) stops the connection with a 502 that says why; nothing of
 * that request is sent.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import type * as net from 'node:net';
import { Duplex } from 'node:stream';
import * as tls from 'node:tls';
import { leafFor } from '../egress-ca';
import { headersOf, placeholderNames, rewriteHead, type TransformRule, type TransformRules } from '../transform-rules';
import { RequestSplitter } from './http-requests';
import { tieAnswers } from './tie';

/** What the relay's policy file says of a sandbox's transforms. */
export interface TransformPolicy {
  sandboxID: string;
  rules: TransformRules;
  /** The sandbox's CA directory (egress-ca.ts). */
  caDir: string;
  /** The platform's Unix socket that resolves a secret for a sandbox. */
  resolver: string;
  /** CA files trusted for destinations besides the host's store. */
  upstreamCaFiles?: string[];
}

/** The host's trust store: what a destination's certificate is verified against. */
export const HOST_TRUST_STORE = '/etc/ssl/certs/ca-certificates.crt';

const leaves = new Map<string, Promise<tls.SecureContext>>();

function leafContext(caDir: string, name: string): Promise<tls.SecureContext> {
  const key = `${caDir}\n${name}`;
  let made = leaves.get(key);
  if (!made) {
    made = leafFor(caDir, name).then(({ cert, key: k }) => tls.createSecureContext({ cert, key: k, minVersion: 'TLSv1.2' }));
    made.catch(() => leaves.delete(key));
    if (leaves.size > 1000) leaves.clear();
    leaves.set(key, made);
  }
  return made;
}

function trusted(policy: TransformPolicy): string[] {
  const out: string[] = [];
  for (const f of [HOST_TRUST_STORE, ...(policy.upstreamCaFiles ?? [])]) {
    try {
      out.push(readFileSync(f, 'utf8'));
    } catch {
      // a missing store adds nothing
    }
  }
  return out;
}

/** The secret's value for the sandbox, asked of the platform now; undefined when it has none of that name. */
export function resolveSecret(socketPath: string, sandboxID: string, name: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath,
        method: 'GET',
        path: `/resolve?sandbox=${encodeURIComponent(sandboxID)}&name=${encodeURIComponent(name)}`,
        timeout: 10_000,
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => {
          if (res.statusCode === 200) resolve(Buffer.concat(parts).toString('utf8'));
          else if (res.statusCode === 404) resolve(undefined);
          else reject(new Error(`the platform answered ${res.statusCode}`));
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('the platform did not answer within 10 s')));
    req.on('error', (err) => reject(new Error(`the platform cannot be asked: ${err.message}`)));
    req.end();
  });
}

/** The client's bytes with `head` (already read) in front, as a stream TLS can run over. */
function replaying(client: net.Socket, head: Buffer): Duplex {
  const d = new Duplex({
    read() {
      client.resume();
    },
    write(chunk, _enc, cb) {
      client.write(chunk, cb);
    },
    final(cb) {
      client.end();
      cb();
    },
    destroy(err, cb) {
      client.destroy();
      cb(err);
    },
  });
  if (head.length > 0) d.push(head);
  client.on('data', (c: Buffer) => {
    if (!d.push(c)) client.pause();
  });
  client.on('end', () => d.push(null));
  client.on('close', () => d.destroy());
  client.resume();
  return d;
}

function answer(socket: tls.TLSSocket, status: string, reason: string): void {
  const body = `${reason}\n`;
  socket.end(
    `HTTP/1.1 ${status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\nx-sandbox-kit-egress: refused\r\n\r\n${body}`,
  );
}

/**
 * Terminates the client's TLS for `name`, then passes each request on to `connect()`'s socket over TLS with the
 * rule set applied. `refuse` logs why a connection ended early.
 */
export async function interceptTls(
  client: net.Socket,
  head: Buffer,
  name: string,
  set: readonly TransformRule[],
  policy: TransformPolicy,
  connect: () => Promise<net.Socket>,
  refuse: (reason: string) => void,
): Promise<void> {
  const secureContext = await leafContext(policy.caDir, name);
  const inner = new tls.TLSSocket(replaying(client, head), { isServer: true, secureContext, ALPNProtocols: ['http/1.1'] });
  inner.on('error', () => inner.destroy());
  await new Promise<void>((resolve, reject) => {
    inner.once('secure', resolve);
    inner.once('close', () => reject(new Error('the client left during the TLS handshake')));
  });
  inner.pause();
  let upstream: tls.TLSSocket;
  try {
    const raw = await connect();
    upstream = tls.connect({ socket: raw, servername: name, ca: trusted(policy), ALPNProtocols: ['http/1.1'], minVersion: 'TLSv1.2' });
    await new Promise<void>((resolve, reject) => {
      upstream.once('secureConnect', resolve);
      upstream.once('error', reject);
    });
  } catch (err) {
    refuse(`${name}: ${(err as Error).message}`);
    answer(inner, '502 Bad Gateway', `sandbox-kit egress: ${name} cannot be reached over verified TLS: ${(err as Error).message}`);
    return;
  }
  tieAnswers(inner, upstream);
  inner.on('end', () => upstream.end());

  const headers = headersOf(set);
  const names = [...new Set([...headers.values()].flatMap(([, v]) => placeholderNames(v)))];
  const splitter = new RequestSplitter();
  let queue = Promise.resolve(true);
  const stop = (status: string, reason: string) => {
    refuse(`${name}: ${reason}`);
    upstream.unpipe(inner);
    upstream.destroy();
    answer(inner, status, `sandbox-kit egress: ${reason}`);
  };
  const feed = async (chunk: Buffer): Promise<boolean> => {
    const { pieces, error } = splitter.push(chunk);
    for (const piece of pieces) {
      let bytes = piece.bytes;
      if (piece.request) {
        const values = new Map<string, string>();
        try {
          for (const secret of names) {
            const value = await resolveSecret(policy.resolver, policy.sandboxID, secret);
            if (value === undefined) {
              stop(
                '502 Bad Gateway',
                `the secret ${JSON.stringify(secret)} of a rule for ${name} is not one of this sandbox's team: the request was not sent`,
              );
              return false;
            }
            values.set(secret, value);
          }
          const end = bytes.length - 4;
          bytes = Buffer.concat([
            Buffer.from(rewriteHead(bytes.toString('latin1', 0, end), headers, values), 'latin1'),
            Buffer.from('\r\n\r\n'),
          ]);
        } catch (err) {
          stop('502 Bad Gateway', `${(err as Error).message}: the request was not sent`);
          return false;
        }
      }
      if (!upstream.write(bytes)) await new Promise((r) => upstream.once('drain', r));
    }
    if (error !== undefined) {
      stop('400 Bad Request', `its requests cannot be followed: ${error}`);
      return false;
    }
    return true;
  };
  inner.on('data', (chunk: Buffer) => {
    inner.pause();
    queue = queue.then((ok) => (ok ? feed(chunk) : false));
    void queue.then((ok) => {
      if (ok) inner.resume();
    });
  });
  inner.resume();
}
