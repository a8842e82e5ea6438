import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

describe('the Pulumi entry point', () => {
  it('compiles and runs infra/ the way the Pulumi Node language host does (ts-node, tsconfig.json, main: infra/)', () => {
    // Type-checking with ts-node takes a while on a small machine.
    const child = spawnSync(process.execPath, [join(__dirname, 'load-like-pulumi.js')], { cwd: ROOT, encoding: 'utf8', timeout: 170_000 });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    const { exports, registered } = JSON.parse(child.stdout.trim().split('\n').pop()!) as { exports: Record<string, string>; registered: string[] };
    expect(exports).toEqual({
      ingressIp: 'string',
      egressIp: 'string',
      egressMode: 'string',
      clientConfigLocal: 'string',
      clientConfigTransparent: 'string',
      natChainScript: 'string',
      sshUser: 'string',
      sshHost: 'string',
      verifyCommand: 'string',
    });
    expect(registered).toEqual(
      expect.arrayContaining(['aws:ec2/instance:Instance::proxy-instance', 'aws:ec2/eip:Eip::egress-eip', 'sandbox-kit:aws:ProxyHost::proxy']),
    );
  }, 180_000);
});
