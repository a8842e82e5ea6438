/**
 * An internet stand-in for a standalone sandbox network: a namespace `<name>.inet` linked to the sandbox-host
 * namespace, which routes everything there by default. It holds public addresses (203.0.113.1 and .2), a private
 * service (10.77.0.1), a resolver stand-in (10.77.0.53) and the cloud metadata address (169.254.169.254); one HTTP
 * server on port 80 and 53 answers on all of them with the address it was called on and the caller's address.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';

export const INTERNET = {
  web: '203.0.113.1',
  web2: '203.0.113.2',
  privateService: '10.77.0.1',
  resolver: '10.77.0.53',
  metadata: '169.254.169.254',
  /** The sandbox-host namespace's own address on the link. */
  edge: '203.0.113.254',
} as const;

const SERVER = `
const http = require('node:http');
for (const port of [80, 53]) {
  http.createServer((req, res) => res.end(JSON.stringify({ called: req.socket.localAddress, from: req.socket.remoteAddress, host: req.headers.host ?? '' })))
    .listen(port, '0.0.0.0');
}
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
  const close = () => {
    server?.kill('SIGKILL');
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
    server = spawn('ip', ['netns', 'exec', namespace, process.execPath, '-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
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
