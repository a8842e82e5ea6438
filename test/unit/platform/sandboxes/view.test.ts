import type { SandboxRecord } from '../../../../src/platform/sandboxes/record';
import { listedSandbox, sandboxDetail } from '../../../../src/platform/sandboxes/view';

describe('sandbox views', () => {
  const record: SandboxRecord = {
    sandboxID: 's1',
    templateID: 'tid',
    alias: 'proxy',
    envdAccessToken: 'secret',
    state: 'paused',
    startedAt: '2026-01-01T00:00:00.000Z',
    endAt: '2026-01-01T00:05:00.000Z',
    cpuCount: 1,
    memoryMB: 1024,
    metadata: { a: 'b' },
    envVars: { HIDDEN: '1' },
    templateEnvs: {},
    autoPause: true,
    autoResume: true,
    address: '10.0.0.2',
    agentPort: 49983,
    defaultUser: 'user',
  };
  const ctx = { domain: null, clientID: 'sandbox-kit' };

  it('detail carries the token and the envd version; env vars and addresses stay inside', () => {
    const detail = sandboxDetail(record, ctx);
    expect(detail).toMatchObject({
      sandboxID: 's1',
      envdAccessToken: 'secret',
      envdVersion: expect.stringMatching(/^\d+\.\d+\.\d+$/),
      lifecycle: { onTimeout: 'pause', autoResume: true },
    });
    expect(JSON.stringify(detail)).not.toContain('HIDDEN');
    expect(JSON.stringify(detail)).not.toContain('10.0.0.2');
  });

  it('a list entry has no token', () => {
    expect(listedSandbox(record, ctx)).not.toHaveProperty('envdAccessToken');
  });
});
