import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fakeBundle } from './helpers/run-program';

const ROOT = join(__dirname, '..', '..');

describe('the Pulumi entry point', () => {
  it('compiles and runs infra/ the way the Pulumi Node language host does (ts-node, tsconfig.json, main: infra/)', () => {
    // Type-checking with ts-node takes a while on a small machine.
    const child = spawnSync(process.execPath, [join(__dirname, 'helpers', 'load-like-pulumi.js')], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 170_000,
      env: { ...process.env, SANDBOX_KIT_BUNDLE_DIR: fakeBundle() },
    });
    // The one expected diagnostic: this config has no SSH key, so the template is not built by the stack.
    const stderr = child.stderr.split('\n').filter((l) => l !== '');
    expect(stderr).toEqual([expect.stringMatching(/^warning: .*the proxy template is not built by this stack: it logs in over SSH/)]);
    expect(child.status).toBe(0);
    const { exports, registered } = JSON.parse(child.stdout.trim().split('\n').pop()!) as {
      exports: Record<string, string>;
      registered: string[];
    };
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
      apiUrl: 'string',
      sandboxUrl: 'string',
      apiKey: 'string',
      templateAlias: 'string',
      templateId: 'string',
      e2bApiUrlExport: 'string',
      e2bSandboxUrlExport: 'string',
      e2bVolumeApiUrlExport: 'string',
      e2bApiKeyExport: 'string',
      sandboxHost: 'string',
      sandboxVerifyCommand: 'string',
    });
    expect(registered).toEqual(
      expect.arrayContaining([
        'aws:ec2/instance:Instance::proxy-instance',
        'aws:ec2/eip:Eip::egress-eip',
        'sandbox-kit:aws:ProxyHost::proxy',
        'sandbox-kit:aws:SandboxHost::sandbox',
        'aws:s3/bucketObjectv2:BucketObjectv2::bundle-object',
      ]),
    );
  }, 180_000);
});
