/**
 * A sandbox's egress CA: the certificate authority its trust stores are given and the egress relay signs leaf
 * certificates with, for the hosts whose HTTPS requests it transforms (transform-rules.ts). One per sandbox, made with
 * the openssl CLI in a directory of the platform's state (0700; keys 0600) that never enters the sandbox; removed with
 * the sandbox. The sandbox gets copies of the trust stores of its image with the CA appended, bound read-only over
 * them, and the variables common TLS stacks read.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const CA_CERT = 'ca.pem';
export const CA_KEY = 'ca.key';
const LEAF_DAYS = 30;
const CA_DAYS = 3650;
const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** Where images keep their CA bundle (Debian and Ubuntu, Fedora and RHEL, Alpine, openSUSE). */
export const TRUST_STORES = [
  '/etc/ssl/certs/ca-certificates.crt',
  '/etc/pki/tls/certs/ca-bundle.crt',
  '/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem',
  '/etc/ssl/cert.pem',
  '/etc/ssl/ca-bundle.pem',
] as const;

/** The variables TLS stacks read a CA bundle from: Node (added to its own), OpenSSL and curl, Python's requests. */
export const TRUST_ENV = ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'REQUESTS_CA_BUNDLE'] as const;

/** A host name fit for a certificate and a file name: lower-case labels of letters, digits and "-". */
const NAME = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Makes the CA in `dir` (0700) unless it is there. */
export async function makeEgressCa(dir: string, label: string): Promise<void> {
  if (fs.existsSync(join(dir, CA_CERT)) && fs.existsSync(join(dir, CA_KEY))) return;
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
  await run('openssl', [
    'req',
    '-x509',
    ...EC,
    '-keyout',
    join(dir, CA_KEY),
    '-out',
    join(dir, CA_CERT),
    '-days',
    String(CA_DAYS),
    '-subj',
    `/CN=sandbox-kit egress CA ${label}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE,pathlen:0',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  fs.chmodSync(join(dir, CA_KEY), 0o600);
}

/** The leaf certificate and key for `name`, signed by the CA in `dir`; made once, then read. */
export async function leafFor(dir: string, name: string): Promise<{ cert: Buffer; key: Buffer }> {
  if (!NAME.test(name)) throw new Error(`${JSON.stringify(name.slice(0, 80))} is not a host name a certificate is made for`);
  const cert = join(dir, `leaf-${name}.pem`);
  const key = join(dir, `leaf-${name}.key`);
  if (!fs.existsSync(cert)) {
    const tmp = `${cert}.${process.pid}.${Date.now()}`;
    await run('openssl', [
      'req',
      '-x509',
      ...EC,
      '-keyout',
      key,
      '-out',
      tmp,
      '-days',
      String(LEAF_DAYS),
      '-subj',
      `/CN=${name}`,
      '-CA',
      join(dir, CA_CERT),
      '-CAkey',
      join(dir, CA_KEY),
      '-addext',
      `subjectAltName=DNS:${name}`,
      '-addext',
      'basicConstraints=critical,CA:FALSE',
      '-addext',
      'extendedKeyUsage=serverAuth',
    ]);
    fs.chmodSync(key, 0o600);
    fs.renameSync(tmp, cert);
  }
  return { cert: fs.readFileSync(cert), key: fs.readFileSync(key) };
}

/** A regular file at `inside` in the topmost layer that has it (layers topmost first), or undefined. */
function fileInLayers(layers: readonly string[], inside: string): string | undefined {
  for (const layer of layers) {
    const p = join(layer, inside);
    try {
      const st = fs.lstatSync(p);
      if (st.isFile()) return p;
      return undefined;
    } catch {
      // not in this layer
    }
  }
  return undefined;
}

/**
 * Copies of the image's trust stores with the CA appended, in `dir`, and what binds them read-only over the
 * originals; an image with none gets the CA alone at the first path. `env`: the variables pointing at the bundle.
 */
export function trustedStores(
  dir: string,
  layers: readonly string[],
): { binds: Array<{ source: string; target: string }>; env: Record<string, string> } {
  const ca = fs.readFileSync(join(dir, CA_CERT), 'utf8');
  const found = TRUST_STORES.map((target) => ({ target, from: fileInLayers(layers, target) })).filter((s) => s.from !== undefined);
  const stores = found.length > 0 ? found : [{ target: TRUST_STORES[0], from: undefined }];
  const binds = stores.map(({ target, from }, i) => {
    const source = join(dir, `trust-${i}.pem`);
    const original = from === undefined ? '' : fs.readFileSync(from, 'utf8');
    fs.writeFileSync(source, `${original}${original.endsWith('\n') || original === '' ? '' : '\n'}${ca}`, { mode: 0o644 });
    return { source, target };
  });
  const bundle = binds[0]!.target;
  return { binds, env: Object.fromEntries(TRUST_ENV.map((k) => [k, bundle])) };
}

/** The CA, its leaves and the store copies; idempotent. */
export function removeEgressCa(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}
