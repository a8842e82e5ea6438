import { loadStackConfig } from '../../../src/config';
import { newLocalState } from '../../../src/local/state';
import { summaryText, upJson } from '../../../src/local/summary';

function facts(platform: boolean) {
  const state = newLocalState('demo', 'local', loadStackConfig({ client: { localPort: 1081 } }), '/run/test');
  state.gateway = { url: 'http://127.0.0.1:3000', port: 3000 };
  state.sandboxes = [{ sandboxID: 'abc123', node: platform ? '' : 'sb1', address: platform ? '' : '198.18.2.11', agentPort: 49983 }];
  state.timings = { lab: 1.5, check: 0.5 };
  state.readyAt = '2026-01-01T00:00:00.000Z';
  if (platform) {
    state.platform = { url: 'http://127.0.0.1:4000', apiKeyFile: '/run/test/demo/platform/api-key', stateDir: '/run/test/demo/platform' };
    state.template = { alias: 'sandbox-kit-proxy', templateID: 'tpl1' };
  }
  return {
    state,
    warm: false,
    ingressIp: '203.0.113.10',
    egressIp: '203.0.113.20',
    whoamiUrl: 'http://203.0.113.1/',
    socksPort: 1081,
    ...(platform ? { apiKey: 'sk_x' } : {}),
  };
}

describe('the summary of up', () => {
  it('as JSON: the platform, the gateway, the sandboxes, the proxy and the template', () => {
    expect(upJson(facts(true))).toMatchObject({
      apiUrl: 'http://127.0.0.1:4000',
      sandboxUrl: 'http://127.0.0.1:3000',
      apiKey: 'sk_x',
      sandboxes: [{ sandboxID: 'abc123' }],
      proxy: { ingressIp: '203.0.113.10', egressIp: '203.0.113.20' },
      template: { alias: 'sandbox-kit-proxy', templateID: 'tpl1' },
    });
    expect(upJson(facts(false))).toMatchObject({ apiUrl: null, apiKey: null, template: { templateID: null } });
  });

  it('as text: the four exports, an SDK snippet through the configured SOCKS port, and never the key itself', () => {
    const text = summaryText(facts(true));
    expect(text).toContain('export E2B_API_URL=http://127.0.0.1:4000');
    expect(text).toContain('export E2B_VOLUME_API_URL=http://127.0.0.1:4000');
    expect(text).toContain('export E2B_API_KEY=$(cat /run/test/demo/platform/api-key)');
    expect(text).toContain('export E2B_SANDBOX_URL=http://127.0.0.1:3000');
    expect(text).toContain("Sandbox.connect('abc123')");
    expect(text).toContain('--socks5-hostname 127.0.0.1:1081 http://203.0.113.1/');
    expect(text).not.toContain('sk_x');
    expect(text).toContain('sandbox-kit down --name demo');
  });

  it('without the platform, the lab exec example uses the configured SOCKS port', () => {
    expect(summaryText(facts(false))).toContain(
      'sandbox-kit lab exec sb1 --name demo -- curl -s --socks5-hostname 127.0.0.1:1081 http://203.0.113.1/',
    );
  });
});
