import { sandboxBlockedDestinations } from '../../../src/runtime/network/private-ranges';
import { parse } from 'yaml';
import {
  LOCAL_REDIS_CATALOG,
  LOCAL_REDIS_STATE,
  NODESOURCE_KEY,
  SANDBOX_HOST_PATHS as P,
  SANDBOX_UNITS,
  sandboxUnits,
  gatewayCommand,
  platformCommand,
  renderBuildTemplateScript,
  renderGatewayUnit,
  renderInstallBundleScript,
  renderNetworkUnit,
  renderPlatformUnit,
  renderSandboxCloudInit,
  renderSandboxNetworkScript,
  renderStackFile,
  sandboxHostFiles,
  sandboxPackages,
} from '../../../src/render';
import { loadStackConfig } from '../../../src/config';
import { custom, defaults, HOST_NETWORKS, SERVER_IP } from './helpers/stack-fixtures';
import { expectGolden } from './helpers/golden';
import { API_KEY, BUNDLE, REDIS, sandboxInputs } from './helpers/sandbox-fixtures';

interface CloudConfig {
  apt: { sources: Record<string, { source: string; key: string }> };
  packages: string[];
  write_files: { path: string; permissions: string; owner: string; content: string }[];
  runcmd: string[];
}

const USER_DATA_LIMIT = 16 * 1024;

describe('sandbox host units', () => {
  it('match the golden files', () => {
    expectGolden(
      'sandbox-kit-platform.service',
      renderPlatformUnit(defaults, {
        catalog: LOCAL_REDIS_CATALOG,
        catalogPasswordFile: P.redisPassword,
        state: LOCAL_REDIS_STATE,
        proxyIngressIp: SERVER_IP,
        localRedis: true,
      }),
    );
    expectGolden(
      'sandbox-kit-gateway.service',
      renderGatewayUnit(defaults, {
        catalog: LOCAL_REDIS_CATALOG,
        catalogPasswordFile: P.redisPassword,
        resumeUrl: 'http://127.0.0.1:3001',
        after: [SANDBOX_UNITS.redis, SANDBOX_UNITS.platform],
      }),
    );
    expectGolden('sandbox-kit-network.service', renderNetworkUnit());
  });

  it('never put the API key on a command line: only the path of its 0600 file', () => {
    const platform = platformCommand(defaults, {
      catalog: LOCAL_REDIS_CATALOG,
      catalogPasswordFile: P.redisPassword,
      state: LOCAL_REDIS_STATE,
      proxyIngressIp: SERVER_IP,
    });
    const gateway = gatewayCommand(defaults, {
      catalog: LOCAL_REDIS_CATALOG,
      catalogPasswordFile: P.redisPassword,
      resumeUrl: 'http://127.0.0.1:3001',
    });
    for (const argv of [platform, gateway]) {
      expect(argv[argv.indexOf('--api-key-file') + 1]).toBe(P.apiKey);
      expect(argv.join(' ')).not.toContain(API_KEY);
    }
    expect(platform.slice(0, 3)).toEqual([P.node, P.cli, 'platform']);
    expect(gateway.slice(0, 3)).toEqual([P.node, P.cli, 'gateway']);
  });

  it('take ports, brand and domain from the stack', () => {
    const config = {
      ...custom,
      brand: 'E2b',
      gateway: { port: 8080, domain: 'sandbox.example.com' },
      sandboxHost: { ...custom.sandboxHost, apiPort: 8443 },
    };
    const unit = renderGatewayUnit(config, {
      catalog: REDIS,
      catalogPasswordFile: P.catalogPassword,
      resumeUrl: 'http://api:8443',
      after: [],
    });
    expect(unit).toContain('--port 8080 ');
    expect(unit).toContain('--brand E2b --domain sandbox.example.com ');
    expect(
      renderPlatformUnit(config, {
        catalog: REDIS,
        catalogPasswordFile: P.catalogPassword,
        state: REDIS,
        proxyIngressIp: SERVER_IP,
        localRedis: false,
      }),
    ).toContain(`--port 8443 --host 0.0.0.0 `);
    // Without the local Redis the platform does not wait for it.
    expect(
      renderPlatformUnit(config, {
        catalog: REDIS,
        catalogPasswordFile: P.catalogPassword,
        state: REDIS,
        proxyIngressIp: SERVER_IP,
        localRedis: false,
      }),
    ).not.toContain(SANDBOX_UNITS.redis);
  });

  it("pin the stack's proxy template to the stack's proxy: its alias, the ingress address and the proxy port", () => {
    const config = loadStackConfig({ proxy: { port: '9443' }, template: { alias: 'team-egress' } });
    const argv = platformCommand(config, {
      catalog: REDIS,
      catalogPasswordFile: P.catalogPassword,
      state: REDIS,
      proxyIngressIp: '192.0.2.77',
    });
    expect(argv.slice(argv.indexOf('--stack-egress-template'), argv.indexOf('--stack-egress-template') + 4)).toEqual([
      '--stack-egress-template',
      'team-egress',
      '--stack-egress-proxy',
      '192.0.2.77:9443',
    ]);
    // Every sandbox host that runs sandboxes gets it, from the address the user data carries.
    for (const role of ['single', 'fleet-host'] as const) {
      const unit = sandboxHostFiles(config, sandboxInputs(role)).find((f) => f.path === `${P.units}/${SANDBOX_UNITS.platform}`)!;
      expect(unit.content).toMatch(
        new RegExp(`--stack-egress-template team-egress --stack-egress-proxy ${SERVER_IP.replace(/\./g, '\\.')}:9443(\\s|$)`, 'm'),
      );
    }
  });

  it("pass the stack's warm pool on, one flag per template, and none when it is empty", () => {
    const options = { catalog: REDIS, catalogPasswordFile: P.catalogPassword, state: REDIS, proxyIngressIp: SERVER_IP };
    expect(platformCommand(loadStackConfig({}), options)).not.toContain('--warm-pool');
    const argv = platformCommand(loadStackConfig({ sandboxHost: { warmPool: { base: 2, 'code-interpreter-v1': 1 } } }), options);
    expect(argv.filter((_, i) => argv[i - 1] === '--warm-pool')).toEqual(['base=2', 'code-interpreter-v1=1']);
  });

  it('refuse an argument that would need quoting in a unit', () => {
    expect(() =>
      renderPlatformUnit(defaults, {
        catalog: 'redis://a b',
        catalogPasswordFile: P.catalogPassword,
        state: REDIS,
        proxyIngressIp: SERVER_IP,
        localRedis: false,
      }),
    ).toThrow(/would need quoting/);
  });
});

describe('sandbox network script', () => {
  const single = {
    addresses: { kind: 'static' as const, cidr: '10.88.0.0/22' },
    proxy: { ip: SERVER_IP, port: 8388, protocols: ['tcp', 'udp'] as const },
    hostNetworks: HOST_NETWORKS,
    routedFrom: [],
  };

  it('matches the golden files (single host, fleet host)', () => {
    expectGolden('sandbox-network.sh', renderSandboxNetworkScript(single));
    expectGolden(
      'sandbox-network-fleet.sh',
      renderSandboxNetworkScript({ ...single, addresses: { kind: 'delegated' }, routedFrom: HOST_NETWORKS }),
    );
  });

  it('blocks private, link-local and the VPC, but lets the proxy port and DNS through first', () => {
    const blocked = sandboxBlockedDestinations(HOST_NETWORKS);
    expect(blocked).toEqual(expect.arrayContaining(['169.254.0.0/16', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', ...HOST_NETWORKS]));
    expect(blocked.every((c) => !c.includes(':'))).toBe(true);
    const script = renderSandboxNetworkScript(single);
    expect(script).toContain(`PROXY=${SERVER_IP}\n`);
    expect(script).toContain('PROXY_PROTOCOLS="tcp udp"');
    expect(script).toContain(`BLOCKED="${blocked.join(' ')}"`);
  });
});

describe('sandbox host cloud-init', () => {
  it('matches the golden files (single host, fleet host, fleet gateway)', () => {
    expectGolden('sandbox-cloud-init-single.yaml', renderSandboxCloudInit(defaults, sandboxInputs('single')));
    expectGolden('sandbox-cloud-init-fleet-host.yaml', renderSandboxCloudInit(defaults, sandboxInputs('fleet-host')));
    expectGolden('sandbox-cloud-init-fleet-gateway.yaml', renderSandboxCloudInit(defaults, sandboxInputs('fleet-gateway')));
  });

  it('fits in EC2 user-data (16 KiB) for every role', () => {
    for (const role of ['single', 'fleet-host', 'fleet-gateway'] as const) {
      expect(Buffer.byteLength(renderSandboxCloudInit(custom, sandboxInputs(role)))).toBeLessThan(USER_DATA_LIMIT);
    }
  });

  it('adds the Node.js 20 repository with its pinned key, installs the packages and writes each file with its mode', () => {
    const doc = parse(renderSandboxCloudInit(defaults, sandboxInputs('single'))) as CloudConfig;
    expect(doc.apt.sources['nodesource.list']).toEqual({
      source: 'deb [signed-by=$KEY_FILE] https://deb.nodesource.com/node_20.x nodistro main',
      key: NODESOURCE_KEY,
    });
    expect(doc.packages).toEqual(sandboxPackages('single'));
    expect(doc.packages).toEqual(
      expect.arrayContaining(['nodejs', 'crun', 'runc', 'tini', 'mmdebstrap', 'redis-server', 'awscli', 'unzip']),
    );
    const files = Object.fromEntries(doc.write_files.map((f) => [f.path, f]));
    expect(files[P.apiKey]).toEqual({ path: P.apiKey, permissions: '0600', owner: 'root:root', content: `${API_KEY}\n` });
    expect(files[P.bundleSums].content).toBe(`${'b'.repeat(64)}  agent.js\n${'a'.repeat(64)}  sandbox-kit.js\n`);
    expect(files[P.installBundle]).toMatchObject({ permissions: '0755', content: renderInstallBundleScript(BUNDLE) });
    expect(files[P.buildTemplate]).toMatchObject({ permissions: '0755', content: renderBuildTemplateScript(defaults) });
    expect(files[`${P.units}/${SANDBOX_UNITS.platform}`].content).toBe(
      renderPlatformUnit(defaults, {
        catalog: LOCAL_REDIS_CATALOG,
        catalogPasswordFile: P.redisPassword,
        state: LOCAL_REDIS_STATE,
        proxyIngressIp: SERVER_IP,
        localRedis: true,
      }),
    );
    // The key is in exactly one file, the 0600 one.
    expect(doc.write_files.filter((f) => f.content.includes(API_KEY)).map((f) => f.path)).toEqual([P.apiKey]);
  });

  it('keeps keys handed out before in the key file, below the key handed out now', () => {
    const former = 'e2b_lettersfromanearlierrelease';
    const doc = parse(renderSandboxCloudInit(defaults, { ...sandboxInputs('single'), formerApiKeys: [former] })) as CloudConfig;
    const file = doc.write_files.find((f) => f.path === P.apiKey);
    expect(file).toMatchObject({ permissions: '0600', content: `${API_KEY}\n${former}\n` });
    expect(doc.write_files.filter((f) => f.content.includes(former)).map((f) => f.path)).toEqual([P.apiKey]);
  });

  it('installs the bundle before it starts the services, and starts them in dependency order', () => {
    const { runcmd } = parse(renderSandboxCloudInit(defaults, sandboxInputs('single'))) as CloudConfig;
    expect(runcmd[0]).toBe(P.installBundle);
    expect(runcmd.at(-1)).toBe(
      `systemctl enable --now ${SANDBOX_UNITS.redis} ${SANDBOX_UNITS.network} ${SANDBOX_UNITS.platform} ${SANDBOX_UNITS.gateway}`,
    );
    expect(runcmd.indexOf('systemctl daemon-reload')).toBeLessThan(runcmd.length - 1);
  });

  it('gives each role only what it runs', () => {
    const paths = (role: 'single' | 'fleet-host' | 'fleet-gateway') => sandboxHostFiles(defaults, sandboxInputs(role)).map((f) => f.path);
    expect(paths('fleet-gateway')).not.toContain(P.networkScript);
    expect(paths('fleet-gateway')).toContain(`${P.units}/${SANDBOX_UNITS.gateway}`);
    expect(paths('fleet-host')).not.toContain(`${P.units}/${SANDBOX_UNITS.gateway}`);
    expect(sandboxPackages('fleet-host')).toContain('redis-server');
    expect(sandboxPackages('fleet-gateway')).not.toContain('redis-server');
    expect(sandboxPackages('fleet-gateway')).not.toContain('crun');
    const fleet = sandboxHostFiles(defaults, sandboxInputs('fleet-host'));
    const platformUnit = fleet.find((f) => f.path.endsWith(SANDBOX_UNITS.platform))!.content;
    expect(platformUnit).toContain(`--catalog ${REDIS} `);
    // The platform's state describes this host's containers and layers: it stays in the host's own Redis, so two
    // hosts never read each other's sandboxes as their own (a restart would remove them). Only the catalog is shared.
    expect(platformUnit).toContain(`--redis ${LOCAL_REDIS_STATE} `);
    expect(platformUnit).not.toContain(REDIS.replace(/\/0$/, '/1'));
    expect(sandboxUnits('fleet-host')[0]).toBe(SANDBOX_UNITS.redis);
    // A fleet host lets the VPC (its gateways) open connections to its sandboxes; a single host does not.
    expect(fleet.find((f) => f.path === P.networkScript)!.content).toContain(`ROUTED_FROM="${HOST_NETWORKS.join(' ')}"`);
    expect(sandboxHostFiles(defaults, sandboxInputs('single')).find((f) => f.path === P.networkScript)!.content).toContain(
      'ROUTED_FROM=""',
    );
  });

  it('refuses a fleet role without its catalog, and a malformed bundle sum', () => {
    expect(() => sandboxHostFiles(defaults, { ...sandboxInputs('fleet-host'), catalog: undefined })).toThrow(/needs the fleet's catalog/);
    expect(() => sandboxHostFiles(defaults, { ...sandboxInputs('single'), bundle: { ...BUNDLE, sums: { 'a.js': 'xyz' } } })).toThrow(
      /a.js: expected a sha256/,
    );
  });
});

describe('template build script', () => {
  it('matches the golden file; the password goes through a 0600 file into the environment, never argv', () => {
    const script = renderBuildTemplateScript(defaults);
    expectGolden('build-template.sh', script);
    expect(script).toContain('SANDBOX_KIT_PROXY_PASSWORD=$(cat "$DIR/password")');
    expect(script).toContain(
      `template build --stack host --server-ip "$(cat "$DIR/server-ip")" --api-url "$API" --api-key-file ${P.apiKey}\n`,
    );
    expect(script).toContain(`curl -fsS -o /dev/null -H "X-API-Key: $(head -n 1 ${P.apiKey})" "$API/templates"`);
  });

  it('hands the build a stack file that parses back to the same template settings, and nothing else', () => {
    for (const config of [
      defaults,
      custom,
      loadStackConfig({ template: { alias: 'other', mode: 'transparent', memoryMB: 2048 }, egress: { generation: 7 } }),
    ]) {
      const doc = parse(renderStackFile(config)) as { config: Record<string, unknown> };
      const values = Object.fromEntries(Object.entries(doc.config).map(([k, v]) => [k.replace(/^sandbox-kit:/, ''), v]));
      expect(Object.keys(values)).toEqual(['proxy', 'client', 'template']);
      const parsed = loadStackConfig(values);
      expect({ proxy: parsed.proxy, client: parsed.client, template: parsed.template }).toEqual({
        proxy: config.proxy,
        client: config.client,
        template: config.template,
      });
    }
    expect(renderStackFile(loadStackConfig({ egress: { generation: 7 } }))).toBe(renderStackFile(defaults));
  });
});
