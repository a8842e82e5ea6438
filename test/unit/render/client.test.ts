import { NAT_CHAIN, renderClientConfig, renderClientStart, renderNatChain } from '../../../src/render';
import { PASSWORD, SERVER_IP, custom, defaults } from './helpers/stack-fixtures';
import { expectGolden } from './helpers/golden';

const target = { serverIp: SERVER_IP, password: PASSWORD };

describe('client config', () => {
  it('matches the golden files for local and transparent mode', () => {
    expectGolden('client-local.json', renderClientConfig(defaults, target, 'local'));
    expectGolden('client-transparent.json', renderClientConfig(defaults, target, 'transparent'));
  });

  it('local mode carries the default client settings, with mode tcp rendered as tcp_only', () => {
    expect(JSON.parse(renderClientConfig(defaults, target, 'local'))).toMatchObject({
      server: SERVER_IP,
      server_port: 8388,
      password: PASSWORD,
      method: 'aes-256-gcm',
      local_address: '0.0.0.0',
      local_port: 1080,
      mode: 'tcp_only',
    });
  });

  it('transparent mode has the same shape and listens on the redirect port', () => {
    const local = JSON.parse(renderClientConfig(custom, target, 'local'));
    const transparent = JSON.parse(renderClientConfig(custom, target, 'transparent'));
    expect(Object.keys(transparent)).toEqual(Object.keys(local));
    expect(local.local_port).toBe(1081);
    expect(transparent.local_port).toBe(12346);
    expect({ ...transparent, local_port: 0 }).toEqual({ ...local, local_port: 0 });
    expect(transparent).toMatchObject({ server_port: 9443, method: 'chacha20-ietf-poly1305', mode: 'tcp_only' });
  });
});

describe('NAT-chain script', () => {
  it('matches the golden files, without and with extra bypass ranges', () => {
    expectGolden('nat-chain.sh', renderNatChain(defaults, SERVER_IP));
    expectGolden('nat-chain-bypass.sh', renderNatChain(custom, SERVER_IP));
  });

  it('is a POSIX sh script returning the proxy, the three special ranges and the extra bypasses, in that order', () => {
    const script = renderNatChain(custom, SERVER_IP);
    expect(script.startsWith('#!/bin/sh\n')).toBe(true);
    expect(script).toContain(`CHAIN=${NAT_CHAIN}\n`);
    expect(script).toContain('REDIRECT_PORT=12346\n');
    expect(script).toContain(`BYPASS="${SERVER_IP}/32 0.0.0.0/8 127.0.0.0/8 169.254.0.0/16 192.0.2.0/24 198.51.100.7/32"\n`);
  });
});

describe('client start command', () => {
  it('matches the golden files', () => {
    expectGolden('client-start-local.sh', renderClientStart(defaults, 'local'));
    expectGolden('client-start-transparent.sh', renderClientStart(defaults, 'transparent'));
  });

  it('waits for 1080 in local mode; for the redirect port and 1080 in transparent mode, after the NAT chain', () => {
    expect(renderClientStart(defaults, 'local')).toContain('PORTS="1080"\n');
    const transparent = renderClientStart(defaults, 'transparent');
    expect(transparent).toContain('PORTS="12345 1080"\n');
    const order = ['ss-redir', 'nat-chain.sh" up', 'ss-local'].map((s) => transparent.indexOf(s));
    expect(order.every((i) => i > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });
});
