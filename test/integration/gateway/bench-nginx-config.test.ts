import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { nginxConfig } from '../../../scripts/bench/gateway-nginx';

describe('nginx peer of the gateway benchmark', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sk-bench-nginx-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('renders a config nginx accepts, routing by the brand header variable', async () => {
    const text = nginxConfig({
      dir,
      listenPort: 18080,
      idHeader: 'Svc-Sandbox-Id',
      sandboxID: 'bench1',
      agentHost: '127.0.0.1',
      agentPort: 49983,
      accessToken: 'tok',
    });
    expect(text).toContain('map $http_svc_sandbox_id $sandbox_upstream');
    const file = join(dir, 'nginx.conf');
    await writeFile(file, text);
    const { stderr } = await promisify(execFile)('nginx', ['-t', '-c', file, '-p', dir, '-e', join(dir, 'error.log')]);
    expect(stderr).toContain('syntax is ok');
  });

  it('runs as many worker processes as the gateway when asked, with a master then', async () => {
    const one = nginxConfig({
      dir,
      listenPort: 18080,
      idHeader: 'Svc-Sandbox-Id',
      sandboxID: 'b',
      agentHost: '127.0.0.1',
      agentPort: 1,
      accessToken: 't',
    });
    expect(one).toContain('master_process off;\nworker_processes 1;');
    const two = nginxConfig({
      dir,
      listenPort: 18080,
      idHeader: 'Svc-Sandbox-Id',
      sandboxID: 'b',
      agentHost: '127.0.0.1',
      agentPort: 1,
      accessToken: 't',
      workers: 2,
    });
    expect(two).toContain('master_process on;\nworker_processes 2;');
    const file = join(dir, 'nginx.conf');
    await writeFile(file, two);
    const { stderr } = await promisify(execFile)('nginx', ['-t', '-c', file, '-p', dir, '-e', join(dir, 'error.log')]);
    expect(stderr).toContain('syntax is ok');
  });
});
