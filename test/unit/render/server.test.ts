import { PRIVATE_DESTINATIONS } from '../../../src/runtime/network/private-ranges';
import { isCidr } from '../../../src/config';
import {
  HOST_PATHS,
  renderEgressAddressScript,
  renderServerAcl,
  renderServerConfig,
  renderServerUnit,
  renderSysctl,
  serverCommand,
  sysctlSettings,
} from '../../../src/render';
import { EGRESS_BIND, HOST_NETWORKS, PASSWORD, custom, defaults } from './helpers/stack-fixtures';
import { expectGolden } from './helpers/golden';

describe('server config (ss-server.json)', () => {
  it('matches the golden file with the default settings', () => {
    expectGolden('server.json', renderServerConfig(defaults.proxy, PASSWORD));
  });

  it('carries the default server settings', () => {
    expect(JSON.parse(renderServerConfig(defaults.proxy, PASSWORD))).toEqual({
      server: '0.0.0.0',
      server_port: 8388,
      password: PASSWORD,
      method: 'aes-256-gcm',
      mode: 'tcp_and_udp',
      timeout: 300,
      fast_open: true,
    });
  });

  it('follows the config: port, method, mode, timeout and fast_open from the stack', () => {
    const server = JSON.parse(renderServerConfig(custom.proxy, PASSWORD));
    expect(server).toMatchObject({ server_port: 9443, method: 'chacha20-ietf-poly1305', mode: 'tcp_only', timeout: 120, fast_open: false });
  });
});

describe('server ACL', () => {
  it('matches the golden file with a host network and an extra blocked range', () => {
    expectGolden('server.acl', renderServerAcl(custom.proxy, HOST_NETWORKS));
  });

  it('blocks loopback, RFC 1918 and link-local destinations and nothing public', () => {
    const acl = renderServerAcl(defaults.proxy);
    const [head, blockList] = acl.split('[outbound_block_list]\n');
    expect(head).toContain('[accept_all]');
    const blocked = blockList.trim().split('\n');
    for (const range of ['127.0.0.0/8', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '0.0.0.0/8']) {
      expect(blocked).toContain(range);
    }
    expect(blocked).toEqual([...PRIVATE_DESTINATIONS]);
    // The lab's stand-in for the public internet must stay reachable.
    expect(blocked.some((b) => b.startsWith('203.0.113.'))).toBe(false);
  });

  it('adds host networks and configured ranges once each', () => {
    const blocked = renderServerAcl(custom.proxy, [...HOST_NETWORKS, '10.0.0.0/8'])
      .split('[outbound_block_list]\n')[1]
      .trim()
      .split('\n');
    expect(blocked).toEqual(expect.arrayContaining(['10.0.0.0/16', '198.51.100.0/24']));
    expect(new Set(blocked).size).toBe(blocked.length);
    expect(blocked.filter((b) => b.includes('.')).every(isCidr)).toBe(true);
  });
});

describe('systemd unit', () => {
  it('matches the golden files, shared and dedicated egress', () => {
    expectGolden('ss-server.service', renderServerUnit());
    expectGolden('ss-server-egress.service', renderServerUnit({ egressBindAddress: EGRESS_BIND }));
  });

  it('restarts always, allows 51200 files, waits for the network and uses the ACL', () => {
    const unit = renderServerUnit();
    expect(unit).toMatch(/^Restart=always$/m);
    expect(unit).toMatch(/^LimitNOFILE=51200$/m);
    expect(unit).toMatch(/^After=network-online\.target$/m);
    expect(unit).toMatch(/^Wants=network-online\.target$/m);
    expect(unit).toContain(`ExecStart=${HOST_PATHS.ssServer} -c ${HOST_PATHS.serverConfig} --acl ${HOST_PATHS.serverAcl}\n`);
    expect(unit).not.toContain('ExecStartPre');
  });

  it('binds outbound connections to the egress address and places it first when one is given', () => {
    const unit = renderServerUnit({ egressBindAddress: EGRESS_BIND });
    expect(unit).toContain(`ExecStartPre=${HOST_PATHS.egressAddressScript}\n`);
    expect(unit).toContain(`ExecStart=${serverCommand({ egressBindAddress: EGRESS_BIND })}\n`);
    expect(serverCommand({ egressBindAddress: EGRESS_BIND }).endsWith(` -b ${EGRESS_BIND}`)).toBe(true);
  });
});

describe('sysctl file', () => {
  it('matches the golden file', () => {
    expectGolden('sysctl.conf', renderSysctl(defaults.proxy));
  });

  it('sets the three proxy-host settings, and TCP Fast Open only when the server uses it', () => {
    const lines = renderSysctl(defaults.proxy).split('\n');
    for (const line of [
      'net.ipv4.ip_forward=1',
      'net.core.default_qdisc=fq',
      'net.ipv4.tcp_congestion_control=bbr',
      'net.ipv4.tcp_fastopen=3',
    ]) {
      expect(lines).toContain(line);
    }
    expect(sysctlSettings(custom.proxy)).not.toHaveProperty(['net.ipv4.tcp_fastopen']);
    expect(renderSysctl(custom.proxy)).not.toContain('tcp_fastopen');
  });
});

describe('egress address script', () => {
  it('matches the golden file', () => {
    expectGolden('egress-address.sh', renderEgressAddressScript(EGRESS_BIND));
  });
});
