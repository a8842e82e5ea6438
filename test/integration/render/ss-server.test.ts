import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Server } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AEAD_METHODS, loadStackConfig } from '../../../src/config';
import { renderClientConfig, renderServerAcl, renderServerConfig } from '../../../src/render';
import { freePort } from '../../helpers/free-port';

/**
 * The rendered configs and ACL driven through the real shadowsocks-libev binaries, on loopback only: ss-local ->
 * ss-server -> a local HTTP server. Without the ACL the request goes through (so the tunnel itself works); with the
 * rendered ACL the same request is refused, because loopback is a private destination.
 */
const PASSWORD = 'ss-server-test-password-42';

async function waitForPort(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listens on 127.0.0.1:${port}`);
}

describe('shadowsocks-libev with the rendered files', () => {
  let dir: string;
  let web: Server;
  let webPort: number;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skt-ss-'));
    web = createHttpServer((_req, res) => res.end('reached'));
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    webPort = (web.address() as { port: number }).port;
  });

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await new Promise((resolve) => web.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('offers exactly the AEAD methods the schema accepts', () => {
    const help = spawnSync('ss-server', ['-h'], { encoding: 'utf8' });
    const listed = (help.stdout + help.stderr).match(/[a-z0-9-]+(?:-gcm|-poly1305)\b/g) ?? [];
    expect([...new Set(listed)].sort()).toEqual([...AEAD_METHODS].sort());
  });

  async function tunnel(label: string, useAcl: boolean): Promise<{ status: number | null; body: string }> {
    const [serverPort, localPort] = [await freePort(), await freePort()];
    const config = loadStackConfig({
      proxy: { listenAddress: '127.0.0.1', port: serverPort, fastOpen: false },
      client: { localAddress: '127.0.0.1', localPort },
    });
    const files = {
      server: join(dir, `${label}-server.json`),
      acl: join(dir, `${label}-server.acl`),
      client: join(dir, `${label}-client-local.json`),
    };
    writeFileSync(files.server, renderServerConfig(config.proxy, PASSWORD), { mode: 0o600 });
    writeFileSync(files.acl, renderServerAcl(config.proxy));
    writeFileSync(files.client, renderClientConfig(config, { serverIp: '127.0.0.1', password: PASSWORD }, 'local'), { mode: 0o600 });
    children.push(spawn('ss-server', ['-c', files.server, ...(useAcl ? ['--acl', files.acl] : [])], { stdio: 'ignore' }));
    children.push(spawn('ss-local', ['-c', files.client], { stdio: 'ignore' }));
    await waitForPort(serverPort);
    await waitForPort(localPort);
    // Asynchronous: the web server answering runs in this process.
    return new Promise((resolve) => {
      execFile('curl', ['-sS', '-m', '5', '--socks5-hostname', `127.0.0.1:${localPort}`, `http://127.0.0.1:${webPort}/`], (err, stdout) => {
        resolve({ status: err ? ((err as { code?: number }).code ?? -1) : 0, body: stdout });
      });
    });
  }

  it('relays through the tunnel without the ACL (control)', async () => {
    expect(await tunnel('open', false)).toEqual({ status: 0, body: 'reached' });
  });

  it('refuses a loopback destination with the rendered ACL', async () => {
    const result = await tunnel('acl', true);
    expect(result.status).not.toBe(0);
    expect(result.body).not.toContain('reached');
  });
});
