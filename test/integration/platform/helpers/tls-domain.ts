/**
 * A test domain as a real host has it for the E2B_DOMAIN form: a throwaway CA and a wildcard certificate for
 * `*.{domain}` (openssl), a TLS frontend that terminates TLS and passes the bytes to the gateway (as a load balancer
 * does), and the environment of an SDK process on such a host: the CA in its trust store (NODE_EXTRA_CA_CERTS) and a
 * resolver that answers `*.{domain}` with 127.0.0.1 (loopback-dns.ts, preloaded). E2B_DOMAIN carries the frontend's
 * port (`{domain}:{port}`), which the 1.x SDK keeps in every URL it makes, so no fixed port is needed.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tls from 'node:tls';
import { bundleForNode } from '../../../helpers/node-bundle';

export interface TlsDomain {
  /** The SDK process's environment: E2B_DOMAIN, NODE_EXTRA_CA_CERTS, NODE_OPTIONS (the resolver), LOOPBACK_DOMAIN. */
  env: Record<string, string>;
  close(): Promise<void>;
}

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

async function makeCertificates(dir: string, domain: string): Promise<void> {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    dir,
    'req',
    '-x509',
    ...ec,
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
  openssl(dir, 'req', ...ec, '-keyout', 'site.key', '-out', 'site.csr', '-subj', `/CN=*.${domain}`);
  await writeFile(join(dir, 'site.ext'), `subjectAltName=DNS:*.${domain}\nextendedKeyUsage=serverAuth\n`);
  openssl(
    dir,
    'x509',
    '-req',
    '-in',
    'site.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    'site.ext',
    '-out',
    'site.crt',
  );
}

export async function startTlsDomain(domain: string, gatewayPort: number): Promise<TlsDomain> {
  const dir = await mkdtemp(join(tmpdir(), 'sk-tls-'));
  await makeCertificates(dir, domain);
  const preload = join(dir, 'loopback-dns.js');
  bundleForNode(join(__dirname, 'loopback-dns.ts'), preload);
  const sockets = new Set<net.Socket>();
  const server = tls.createServer({ key: await readFile(join(dir, 'site.key')), cert: await readFile(join(dir, 'site.crt')) }, (client) => {
    const upstream = net.connect(gatewayPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
    }
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    env: {
      E2B_DOMAIN: `${domain}:${port}`,
      NODE_EXTRA_CA_CERTS: join(dir, 'ca.crt'),
      NODE_OPTIONS: `--require ${preload}`,
      LOOPBACK_DOMAIN: domain,
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
