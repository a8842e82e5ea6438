import { parse } from 'yaml';
import {
  DEBIAN_DEFAULT_UNIT,
  HOST_PATHS,
  UNIT_NAME,
  proxyHostFiles,
  renderCloudInit,
  renderEgressAddressScript,
  renderServerAcl,
  renderServerConfig,
  renderServerUnit,
  renderSysctl,
} from '../../../src/render';
import { EGRESS_BIND, HOST_NETWORKS, PASSWORD, defaults } from './helpers/stack-fixtures';
import { expectGolden } from './helpers/golden';

interface CloudConfig {
  packages: string[];
  write_files: { path: string; permissions: string; content: string }[];
  runcmd: string[];
}

const inputs = { password: PASSWORD, egressBindAddress: EGRESS_BIND, hostNetworks: HOST_NETWORKS };

describe('cloud-init user-data', () => {
  it('matches the golden file (dedicated egress)', () => {
    expectGolden('cloud-init.yaml', renderCloudInit(defaults, inputs));
  });

  it('is #cloud-config YAML that installs shadowsocks-libev and writes each host file with its mode', () => {
    const text = renderCloudInit(defaults, inputs);
    expect(text.startsWith('#cloud-config\n')).toBe(true);
    const doc = parse(text) as CloudConfig;
    expect(doc.packages).toEqual(['shadowsocks-libev']);
    const files = Object.fromEntries(doc.write_files.map((f) => [f.path, f]));
    expect(files[HOST_PATHS.serverConfig]).toMatchObject({ permissions: '0600', content: renderServerConfig(defaults.proxy, PASSWORD) });
    expect(files[HOST_PATHS.serverAcl]).toMatchObject({ permissions: '0644', content: renderServerAcl(defaults.proxy, HOST_NETWORKS) });
    expect(files[HOST_PATHS.sysctl]).toMatchObject({ permissions: '0644', content: renderSysctl(defaults.proxy) });
    expect(files[HOST_PATHS.unit]).toMatchObject({ permissions: '0644', content: renderServerUnit({ egressBindAddress: EGRESS_BIND }) });
    expect(files[HOST_PATHS.egressAddressScript]).toMatchObject({ permissions: '0755', content: renderEgressAddressScript(EGRESS_BIND) });
  });

  it('applies the sysctls, retires the Debian default unit, then enables ours', () => {
    const { runcmd } = parse(renderCloudInit(defaults, inputs)) as CloudConfig;
    const at = (cmd: string) => runcmd.indexOf(cmd);
    expect(at(`sysctl --load ${HOST_PATHS.sysctl}`)).toBeGreaterThanOrEqual(0);
    expect(at(`systemctl disable --now ${DEBIAN_DEFAULT_UNIT}`)).toBeGreaterThanOrEqual(0);
    expect(at(`systemctl enable --now ${UNIT_NAME}`)).toBeGreaterThan(at(`systemctl disable --now ${DEBIAN_DEFAULT_UNIT}`));
    expect(at('systemctl daemon-reload')).toBeLessThan(at(`systemctl enable --now ${UNIT_NAME}`));
  });

  it('writes no egress script in shared mode', () => {
    const paths = proxyHostFiles(defaults, { password: PASSWORD }).map((f) => f.path);
    expect(paths).not.toContain(HOST_PATHS.egressAddressScript);
    expect(paths).toEqual([HOST_PATHS.serverConfig, HOST_PATHS.serverAcl, HOST_PATHS.sysctl, HOST_PATHS.unit]);
  });
});
