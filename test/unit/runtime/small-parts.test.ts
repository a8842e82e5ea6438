import { agentArgv, payloadBinds } from '../../../src/runtime/agent-payload';
import { buildProxyEnv } from '../../../src/runtime/build-proxy-env';
import { cacheEntryName, debianSuite, mmdebstrapArgv } from '../../../src/runtime/base-images';
import { hardNofile } from '../../../src/runtime/host-limits';
import { parseAccount } from '../../../src/runtime/layer-accounts';
import { bridgePortName, macFor, parseAlias } from '../../../src/runtime/network/bridge-network';
import { firstFreeAddress, parseSubnet } from '../../../src/runtime/network/ipv4';
import { rootLinkName } from '../../../src/runtime/network/host-network';
import { inPrivateMountNamespace, overlayOptions, stageTable } from '../../../src/runtime/oci-cli';
import { renderHosts, renderResolvConf } from '../../../src/runtime/sandbox-etc';
import { checkInstanceName, instancePaths } from '../../../src/runtime/instance';

describe('base images', () => {
  test('debian tags map to suites; anything else names what is supported', () => {
    expect(['debian:bookworm', 'debian:12', 'debian:stable', 'debian', 'debian:bookworm-slim'].map(debianSuite)).toEqual([
      'bookworm',
      'bookworm',
      'bookworm',
      'bookworm',
      'bookworm',
    ]);
    expect(['debian:trixie', 'debian:13'].map(debianSuite)).toEqual(['trixie', 'trixie']);
    expect(() => debianSuite('ubuntu:22.04')).toThrow(
      /base image "ubuntu:22.04" is not available offline; supported: debian:bookworm, debian:12, .*debian:trixie, debian:13/,
    );
    expect(() => debianSuite('debian:sid')).toThrow(/not available offline/);
  });

  test('the cache entry depends on suite and package set, not on package order', () => {
    const a = cacheEntryName({ suite: 'bookworm', packages: ['curl', 'bash'], mirror: 'm' });
    expect(a).toMatch(/^bookworm-[0-9a-f]{12}$/);
    expect(cacheEntryName({ suite: 'bookworm', packages: ['bash', 'curl'], mirror: 'm' })).toBe(a);
    expect(cacheEntryName({ suite: 'bookworm', packages: ['bash'], mirror: 'm' })).not.toBe(a);
    expect(mmdebstrapArgv({ suite: 'trixie', packages: ['bash', 'curl'], mirror: 'http://deb.debian.org/debian' }, '/c/x.tmp')).toEqual([
      'mmdebstrap',
      '--variant=minbase',
      '--include=bash,curl',
      // The default user, with sudo for anything and no password (as on E2B's base).
      `--customize-hook=chroot "$1" useradd --create-home --uid 1000 --user-group --shell /bin/bash user && echo 'user ALL=(ALL:ALL) NOPASSWD: ALL' > "$1/etc/sudoers.d/user" && chmod 0440 "$1/etc/sudoers.d/user"`,
      'trixie',
      '/c/x.tmp',
      'http://deb.debian.org/debian',
    ]);
  });
});

describe('network naming and addresses', () => {
  test('addresses: lowest free host of the subnet', () => {
    const s = parseSubnet('198.18.2.0/24');
    expect(firstFreeAddress(s, new Set(['198.18.2.1']))).toBe('198.18.2.2');
    const all = new Set(Array.from({ length: 254 }, (_, i) => `198.18.2.${i + 1}`));
    expect(firstFreeAddress(s, all)).toBeUndefined();
    expect(() => parseSubnet('198.18.2.1/24')).toThrow(/host bits are set/);
    expect(() => parseSubnet('198.18.2.0')).toThrow(/invalid subnet/);
  });

  test('link names fit 15 characters; the alias round-trips; the MAC follows the address', () => {
    expect(bridgePortName('sk-lab-abcdefghijklmnopqrstuvwxyz0123456789')).toMatch(/^v[0-9a-f]{12}$/);
    expect(rootLinkName('abcdefghijkl').length).toBeLessThanOrEqual(15);
    expect(parseAlias('sandbox-kit x-abc 198.19.4.7')).toEqual({ netns: 'x-abc', address: '198.19.4.7' });
    expect(parseAlias('something else')).toBeUndefined();
    expect(macFor('198.19.4.7')).toBe('02:53:c6:13:04:07');
  });
});

describe('host facts', () => {
  test('hard NOFILE from /proc/self/limits', () => {
    const limits =
      'Limit                     Soft Limit           Hard Limit           Units     \nMax open files            1024                 20000                files     \n';
    expect(hardNofile(limits)).toBe(20000);
    expect(hardNofile(limits.replace('20000', 'unlimited'))).toBeUndefined();
  });
});

describe('mounts and argv', () => {
  test('overlay options; paths that would break them are refused', () => {
    expect(overlayOptions({ lower: ['/l/2', '/l/1'], upper: '/s/u', work: '/s/w', target: '/s/r' })).toBe(
      'lowerdir=/l/2:/l/1,upperdir=/s/u,workdir=/s/w',
    );
    expect(() => overlayOptions({ lower: ['/a:b'], upper: '/s/u', work: '/s/w', target: '/s/r' })).toThrow(/no ':'/);
  });

  test('a private mount namespace only when something must be mounted: through private-mounts, or unshare and mount without it', () => {
    expect(inPrivateMountNamespace({ hideUnified: false }, ['runc', 'list'], '/b/private-mounts')).toEqual(['runc', 'list']);
    expect(inPrivateMountNamespace({ hideUnified: false }, ['runc', 'list'], null)).toEqual(['runc', 'list']);
    const setup = { hideUnified: true, hideNetSysctls: true, stageTable: '/t' };
    expect(inPrivateMountNamespace(setup, ['crun', 'create'], '/b/private-mounts')).toEqual([
      '/b/private-mounts',
      '--table',
      '/t',
      '--tmpfs',
      '/sys/fs/cgroup/unified',
      'size=4k,mode=755',
      '--tmpfs',
      '/proc/sys/net',
      'size=4k,mode=555',
      '--',
      'crun',
      'create',
    ]);
    expect(inPrivateMountNamespace({ hideUnified: true }, ['crun', 'state', 'x'], '/b/private-mounts')).toEqual([
      '/b/private-mounts',
      '--tmpfs',
      '/sys/fs/cgroup/unified',
      'size=4k,mode=755',
      '--',
      'crun',
      'state',
      'x',
    ]);
    expect(inPrivateMountNamespace(setup, ['crun', 'create'], null)).toEqual([
      'unshare',
      '-m',
      '--propagation',
      'slave',
      'sh',
      '-ec',
      'mount -a -T "$1"\nshift\nmount -t tmpfs -o size=4k,mode=755 sandbox-kit-hide /sys/fs/cgroup/unified\nmount -t tmpfs -o size=4k,mode=555 sandbox-kit-hide /proc/sys/net\nexec "$@"',
      'sh',
      '/t',
      'crun',
      'create',
    ]);
  });

  test('the stage: binds then the overlay in one table, paths escaped as fstab has them', () => {
    const overlay = { lower: ['/l'], upper: '/u', work: '/w', target: '/r' };
    const binds = [
      { source: '/a b', target: '/s/d0' },
      { source: '/c\\d\te', target: '/s/f1' },
    ];
    expect(stageTable(binds, overlay)).toBe(
      '/a\\040b /s/d0 none bind 0 0\n/c\\134d\\011e /s/f1 none bind 0 0\nsandbox-kit /r overlay lowerdir=/l,upperdir=/u,workdir=/w 0 0\n',
    );
  });

  test('agent argv and payload binds', () => {
    expect(agentArgv(49983, ['--brand', 'Svc'])).toEqual([
      '/opt/sandbox-kit/tini',
      '-s',
      '--',
      '/opt/sandbox-kit/node',
      '--max-semi-space-size=1',
      '--max-old-space-size=96',
      '/opt/sandbox-kit/bundle/run.js',
      'agent',
      '--port',
      '49983',
      '--brand',
      'Svc',
    ]);
    expect(payloadBinds({ bundleDir: '/b', node: '/n', tini: '/t' }).map((b) => [b.source, b.target, b.readonly])).toEqual([
      ['/b', '/opt/sandbox-kit/bundle', true],
      ['/n', '/opt/sandbox-kit/node', true],
      ['/t', '/opt/sandbox-kit/tini', true],
    ]);
  });
});

describe('sandbox /etc and accounts', () => {
  test('hosts and resolv.conf', () => {
    expect(renderHosts('abc', '198.19.1.2')).toBe(
      '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\tabc\n198.19.1.2\tabc\n',
    );
    expect(renderResolvConf('# c\nnameserver 127.0.0.53\nnameserver 10.0.0.2\nsearch x\n')).toBe('nameserver 10.0.0.2\nsearch x\n');
  });

  test('users by name or uid[:gid], with supplementary groups', () => {
    const passwd = 'root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000::/home/user:/bin/bash\n';
    const group = 'root:x:0:\nsudo:x:27:user\nuser:x:1000:\n';
    expect(parseAccount('user', passwd, group)).toEqual({ uid: 1000, gid: 1000, home: '/home/user', additionalGids: [27] });
    expect(parseAccount('0', passwd, group)).toEqual({ uid: 0, gid: 0, home: '/root', additionalGids: [] });
    expect(parseAccount('1234:55', passwd, group)).toEqual({ uid: 1234, gid: 55, home: '/', additionalGids: [] });
    expect(parseAccount('ghost', passwd, group)).toBeUndefined();
  });

  test('instance names', () => {
    expect(() => checkInstanceName('Bad-Name')).toThrow(/invalid runtime instance name "Bad-Name"/);
    expect(instancePaths('abc', 'crun', { stateRoot: '/s', dataRoot: '/d' })).toEqual({
      instance: 'abc',
      stateDir: '/s/abc/crun',
      dataDir: '/d/abc',
      cgroupParent: 'sandbox-kit-abc',
    });
  });
});

test('build steps get exactly the proxy variables that are set', () => {
  expect(buildProxyEnv({ http_proxy: 'http://p:3128', HTTPS_PROXY: 'http://q:3128', no_proxy: '', PATH: '/bin', HOME: '/root' })).toEqual({
    http_proxy: 'http://p:3128',
    HTTPS_PROXY: 'http://q:3128',
  });
  expect(buildProxyEnv({})).toEqual({});
});
