/**
 * A test domain as a real host has it for the E2B_DOMAIN form: a throwaway CA and a certificate for `*.{domain}`
 * (openssl), a TLS frontend that terminates TLS and passes the bytes to the gateway (as a load balancer does), and
 * the environment of an SDK process on such a host: the CA in its trust store (NODE_EXTRA_CA_CERTS) and a resolver
 * that answers `*.{domain}` with 127.0.0.1 (loopback-dns.ts, preloaded). E2B_DOMAIN carries the frontend's port
 * (`{domain}:{port}`), which the SDKs keep in every URL they make, so no fixed port is needed.
 *
 * A wildcard is refused by TLS clients for a domain of one label (`*.localhost`, the local system's default): there
 * the frontend issues a certificate for each name a client asks for (SNI), as an ACME-issuing frontend would.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tls from 'node:tls';
import { bundleForNode } from './node-bundle';

export interface TlsDomain {
  /** The SDK process's environment: E2B_DOMAIN, NODE_EXTRA_CA_CERTS, NODE_OPTIONS (the resolver), LOOPBACK_DOMAIN. */
  env: Record<string, string>;
  close(): Promise<void>;
}

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function makeCa(dir: string): void {
  openssl(
    dir,
    'req',
    '-x509',
    ...EC_KEY,
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '1',
    '-subj',
    '/CN=throwaway test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign',
  );
}

/** A key and a certificate for `name` (a host name or `*.{domain}`), signed by the CA in dir. */
async function issue(dir: string, name: string, file: string): Promise<{ key: Buffer; cert: Buffer }> {
  openssl(dir, 'req', ...EC_KEY, '-keyout', `${file}.key`, '-out', `${file}.csr`, '-subj', `/CN=${name}`);
  await writeFile(join(dir, `${file}.ext`), `subjectAltName=DNS:${name}\nextendedKeyUsage=serverAuth\n`);
  openssl(
    dir,
    'x509',
    '-req',
    '-in',
    `${file}.csr`,
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    `${file}.ext`,
    '-out',
    `${file}.crt`,
  );
  return { key: await readFile(join(dir, `${file}.key`)), cert: await readFile(join(dir, `${file}.crt`)) };
}

/** A throwaway CA and a certificate for `*.{domain}` signed by it, in a directory of their own. */
export interface TestCertificates {
  dir: string;
  /** The CA's certificate file: what a client that should trust the domain is given (NODE_EXTRA_CA_CERTS). */
  caFile: string;
  key: Buffer;
  cert: Buffer;
  /** Environment of a Node process on a host where the domain resolves to 127.0.0.1 and its CA is trusted. */
  clientEnv: Record<string, string>;
  /** A certificate for one name, from the same CA. */
  issue(name: string): Promise<{ key: Buffer; cert: Buffer }>;
  close(): Promise<void>;
}

export async function testCertificates(domain: string): Promise<TestCertificates> {
  const dir = await mkdtemp(join(tmpdir(), 'sk-tls-'));
  makeCa(dir);
  const site = await issue(dir, `*.${domain}`, 'site');
  const preload = join(dir, 'loopback-dns.js');
  bundleForNode(join(__dirname, 'loopback-dns.ts'), preload);
  const caFile = join(dir, 'ca.crt');
  let issued = 0;
  return {
    dir,
    caFile,
    ...site,
    clientEnv: { NODE_EXTRA_CA_CERTS: caFile, NODE_OPTIONS: `--require ${preload}`, LOOPBACK_DOMAIN: domain },
    issue: (name) => issue(dir, name, `name-${++issued}`),
    close: () => rm(dir, { recursive: true, force: true }),
  };
}

export async function startTlsDomain(domain: string, gatewayPort: number): Promise<TlsDomain> {
  const certs = await testCertificates(domain);
  const perName = !domain.includes('.');
  const contexts = new Map<string, Promise<tls.SecureContext>>();
  const contextFor = (name: string) => {
    let context = contexts.get(name);
    if (!context) {
      context = certs.issue(name).then((c) => tls.createSecureContext(c));
      contexts.set(name, context);
    }
    return context;
  };
  const sockets = new Set<net.Socket>();
  const server = tls.createServer(
    {
      key: certs.key,
      cert: certs.cert,
      ...(perName
        ? {
            SNICallback: (name: string, cb: (err: Error | null, ctx?: tls.SecureContext) => void) =>
              void contextFor(name.toLowerCase()).then((ctx) => cb(null, ctx), cb),
          }
        : {}),
    },
    (client) => {
      const upstream = net.connect(gatewayPort, '127.0.0.1');
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.once('close', () => sockets.delete(s));
      }
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.pipe(upstream).pipe(client);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    env: { E2B_DOMAIN: `${domain}:${port}`, ...certs.clientEnv },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await certs.close();
    },
  };
}
