import {
  bindAddress,
  parseAddresses,
  parseCmdline,
  parseDefaultRouteDevice,
  parseLimit,
  parseListeners,
  parseQdiscKinds,
  parseStat,
  parseSysctl,
} from '../../../src/verify';
import * as captured from './helpers/captured';

describe('verify output parsers', () => {
  it('reads sysctl values', () => {
    expect(parseSysctl(captured.SYSCTL_APPLIED)).toEqual({
      'net.ipv4.ip_forward': '1',
      'net.core.default_qdisc': 'fq',
      'net.ipv4.tcp_congestion_control': 'bbr',
      'net.ipv4.tcp_fastopen': '3',
    });
    expect(parseSysctl('sysctl: cannot stat /proc/sys/net/x: No such file\n')).toEqual({});
  });

  it('finds the default-route device and its qdiscs', () => {
    expect(parseDefaultRouteDevice(captured.ROUTE_DEFAULT)).toBe('ens5');
    expect(parseDefaultRouteDevice('')).toBeUndefined();
    expect(parseQdiscKinds(captured.TC_MQ_FQ)).toEqual(['mq', 'fq', 'fq']);
    expect(parseQdiscKinds(captured.TC_PFIFO)).toEqual(['pfifo_fast']);
  });

  it('reads listening sockets with their processes', () => {
    const sockets = parseListeners(captured.SS_LISTENING);
    expect(sockets.filter((s) => s.port === 8388)).toEqual([
      { protocol: 'udp', address: '0.0.0.0', port: 8388, processes: [{ name: 'ss-server', pid: 812 }] },
      { protocol: 'tcp', address: '0.0.0.0', port: 8388, processes: [{ name: 'ss-server', pid: 812 }] },
    ]);
    expect(sockets.find((s) => s.address === '[::]')).toEqual({
      protocol: 'tcp',
      address: '[::]',
      port: 22,
      processes: [{ name: 'sshd', pid: 530 }],
    });
    expect(parseListeners(captured.SS_PORT_TAKEN)[0].processes.map((p) => p.pid)).toEqual([900, 901]);
  });

  it('reads the open-files limit', () => {
    expect(parseLimit(captured.LIMITS_51200, 'Max open files')).toEqual({ soft: '51200', hard: '51200' });
    expect(parseLimit(captured.LIMITS_DEFAULT, 'Max open files')).toEqual({ soft: '1024', hard: '524288' });
    expect(parseLimit('', 'Max open files')).toBeUndefined();
  });

  it('reads file modes', () => {
    expect(parseStat('600 root root\n')).toEqual({ mode: '600', owner: 'root', group: 'root' });
    expect(parseStat('0644 root adm')).toEqual({ mode: '644', owner: 'root', group: 'adm' });
    expect(parseStat("stat: cannot statx '/x': No such file or directory")).toBeUndefined();
  });

  it('finds the bind address in the command line', () => {
    expect(bindAddress(parseCmdline(captured.CMDLINE_BIND))).toBe('172.31.16.11');
    expect(bindAddress(parseCmdline(captured.CMDLINE_SHARED))).toBeUndefined();
    expect(bindAddress(parseCmdline('ss-server\0-b198.18.0.9\0'))).toBe('198.18.0.9');
  });

  it('lists interface addresses', () => {
    expect(parseAddresses(captured.IP_ADDRS)).toEqual([
      { device: 'lo', address: '127.0.0.1' },
      { device: 'ens5', address: '172.31.16.10' },
      { device: 'ens5', address: '172.31.16.11' },
    ]);
    expect(parseAddresses(captured.IP_ADDRS_LAB)[1]).toEqual({ device: 'px0', address: '198.18.0.2' });
  });
});
