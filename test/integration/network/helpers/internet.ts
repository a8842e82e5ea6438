/**
 * An internet stand-in for a standalone sandbox network: a namespace `<name>.inet` linked to the sandbox-host
 * namespace, which routes everything there by default. It holds public addresses (203.0.113.1 and .2), a private
 * service (10.77.0.1), a resolver stand-in (10.77.0.53) and the cloud metadata address (169.254.169.254); one HTTP
 * server on port 80 and 53 answers on all of them with the address it was called on and the caller's address (and
 * the Host it was sent), an HTTPS server on 443 the same with the SNI the client sent (a self-signed certificate).
 * The resolver answers UDP DNS for the names of NAMES, and 203.0.113.2:1080 is a SOCKS5 proxy (user `skn`, password
 * `secret`) whose connections leave from 203.0.113.2 and whose domain targets it resolves with NAMES.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const INTERNET = {
  web: '203.0.113.1',
  web2: '203.0.113.2',
  privateService: '10.77.0.1',
  resolver: '10.77.0.53',
  metadata: '169.254.169.254',
  /** The sandbox-host namespace's own address on the link. */
  edge: '203.0.113.254',
} as const;

/** Names the resolver stand-in knows (anything else is NXDOMAIN). */
export const NAMES: Record<string, string> = {
  'allowed.skn.test': INTERNET.web,
  'other.skn.test': INTERNET.web,
  'a.wild.skn.test': INTERNET.web,
  'wild.skn.test': INTERNET.web,
  'web2.skn.test': INTERNET.web2,
  'meta.skn.test': INTERNET.metadata,
};

export const SOCKS = { address: INTERNET.web2, port: 1080, username: 'skn', password: 'secret' } as const;

const SERVER = `
const http = require('node:http');
const https = require('node:https');
const net = require('node:net');
const dgram = require('node:dgram');
const fs = require('node:fs');
const [certDir, namesJson, resolver, socksJson] = process.argv.slice(1);
const NAMES = JSON.parse(namesJson);
const SOCKS = JSON.parse(socksJson);
const answer = (req, res) => res.end(JSON.stringify({ called: req.socket.localAddress, from: req.socket.remoteAddress, host: req.headers.host ?? '', sni: req.socket.servername ?? null }));
for (const port of [80, 53]) http.createServer(answer).listen(port, '0.0.0.0');
https.createServer({ key: fs.readFileSync(certDir + '/key.pem'), cert: fs.readFileSync(certDir + '/cert.pem') }, answer).listen(443, '0.0.0.0');

const dns = dgram.createSocket('udp4');
dns.on('message', (q, from) => {
  let p = 12;
  const labels = [];
  while (q[p]) { labels.push(q.toString('latin1', p + 1, p + 1 + q[p])); p += 1 + q[p]; }
  const qtype = q.readUInt16BE(p + 1);
  const address = NAMES[labels.join('.').toLowerCase()];
  const head = Buffer.from(q.subarray(0, 12));
  head[2] = 0x80 | (q[2] & 1);
  head[3] = address ? 0x80 : 0x83;
  const a = address && qtype === 1;
  head.writeUInt16BE(1, 4); head.writeUInt16BE(a ? 1 : 0, 6); head.writeUInt32BE(0, 8);
  const rr = a ? Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 30, 0, 4, ...address.split('.').map(Number)]) : Buffer.alloc(0);
  dns.send(Buffer.concat([head, q.subarray(12, p + 5), rr]), from.port, from.address);
});
dns.bind(53, resolver);

net.createServer((c) => {
  let buf = Buffer.alloc(0);
  let stage = 'greeting';
  c.on('error', () => c.destroy());
  const onData = (d) => {
    buf = Buffer.concat([buf, d]);
    if (stage === 'greeting' && buf.length >= 2 && buf.length >= 2 + buf[1]) {
      const offers = [...buf.subarray(2, 2 + buf[1])];
      buf = buf.subarray(2 + buf[1]);
      if (!offers.includes(2)) { c.end(Buffer.from([5, 0xff])); return; }
      c.write(Buffer.from([5, 2])); stage = 'auth';
    }
    if (stage === 'auth' && buf.length >= 2 && buf.length >= 3 + buf[1] && buf.length >= 3 + buf[1] + buf[2 + buf[1]]) {
      const u = buf.toString('utf8', 2, 2 + buf[1]);
      const pw = buf.toString('utf8', 3 + buf[1], 3 + buf[1] + buf[2 + buf[1]]);
      buf = buf.subarray(3 + buf[1] + buf[2 + buf[1]]);
      if (u !== SOCKS.username || pw !== SOCKS.password) { c.end(Buffer.from([1, 1])); return; }
      c.write(Buffer.from([1, 0])); stage = 'request';
    }
    if (stage === 'request' && buf.length >= 5) {
      const atyp = buf[3];
      const len = atyp === 1 ? 4 : atyp === 3 ? 1 + buf[4] : -1;
      if (len < 0) { c.end(Buffer.from([5, 8, 0, 1, 0, 0, 0, 0, 0, 0])); return; }
      if (buf.length < 4 + len + 2) return;
      const host = atyp === 1 ? [...buf.subarray(4, 8)].join('.') : NAMES[buf.toString('latin1', 5, 5 + buf[4]).toLowerCase()];
      const port = buf.readUInt16BE(4 + len);
      const rest = buf.subarray(4 + len + 2);
      stage = 'connecting';
      c.off('data', onData);
      if (!host) { c.end(Buffer.from([5, 4, 0, 1, 0, 0, 0, 0, 0, 0])); return; }
      const u = net.connect({ host, port, localAddress: SOCKS.address }, () => {
        c.write(Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
        if (rest.length) u.write(rest);
        c.pipe(u).pipe(c);
      });
      u.on('error', () => { c.end(Buffer.from([5, 5, 0, 1, 0, 0, 0, 0, 0, 0])); });
    }
  };
  c.on('data', onData);
}).listen(SOCKS.port, SOCKS.address);
console.log('ready');
`;

export interface Internet {
  namespace: string;
  close(): void;
}

const ip = (...args: string[]) => execFileSync('ip', args, { encoding: 'utf8' });

/** Links `<name>.inet` to `hostNamespace` (which gets a default route there) and starts its servers. */
export async function startInternet(name: string, hostNamespace: string, sandboxSubnet: string): Promise<Internet> {
  const namespace = `${name}.inet`;
  let server: ChildProcess | undefined;
  const certDir = mkdtempSync(join(tmpdir(), 'skn-cert-'));
  const close = () => {
    server?.kill('SIGKILL');
    rmSync(certDir, { recursive: true, force: true });
    try {
      ip('netns', 'del', namespace);
    } catch {
      // already gone
    }
  };
  try {
    ip('netns', 'add', namespace);
    ip('-n', hostNamespace, 'link', 'add', 'inet0', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', namespace);
    execFileSync('ip', ['-n', hostNamespace, '-b', '-'], {
      input: [`addr add ${INTERNET.edge}/24 dev inet0`, 'link set inet0 up', `route replace default via ${INTERNET.web}`, ''].join('\n'),
    });
    execFileSync('ip', ['-n', namespace, '-b', '-'], {
      input: [
        'link set lo up',
        `addr add ${INTERNET.web}/24 dev eth0`,
        `addr add ${INTERNET.web2}/24 dev eth0`,
        `addr add ${INTERNET.privateService}/32 dev lo`,
        `addr add ${INTERNET.resolver}/32 dev lo`,
        `addr add ${INTERNET.metadata}/32 dev lo`,
        'link set eth0 up',
        `route add ${sandboxSubnet} via ${INTERNET.edge}`,
        '',
      ].join('\n'),
    });
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=skn.test',
        '-keyout',
        join(certDir, 'key.pem'),
        '-out',
        join(certDir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    server = spawn(
      'ip',
      [
        'netns',
        'exec',
        namespace,
        process.execPath,
        '-e',
        SERVER,
        certDir,
        JSON.stringify(NAMES),
        INTERNET.resolver,
        JSON.stringify(SOCKS),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve, reject) => {
      server?.once('exit', (code) => reject(new Error(`the internet stand-in's server exited (${code})`)));
      server?.stdout?.once('data', () => resolve());
    });
  } catch (err) {
    close();
    throw err;
  }
  return { namespace, close };
}
