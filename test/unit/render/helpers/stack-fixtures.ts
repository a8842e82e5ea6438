import { loadStackConfig, type StackConfig } from '../../../../src/config';

/** Fixed inputs for every render test: TEST-NET addresses and a fixed, obviously fake password. */
export const SERVER_IP = '203.0.113.10';
export const EGRESS_BIND = '10.0.1.20';
export const HOST_NETWORKS = ['10.0.0.0/16'];
export const PASSWORD = 'golden-test-password-0123456789';

/** The defaults: an empty stack config. */
export const defaults: StackConfig = loadStackConfig({});

/** A config that sets every renderer-relevant key away from its default. */
export const custom: StackConfig = loadStackConfig({
  proxy: {
    port: '9443',
    method: 'chacha20-ietf-poly1305',
    mode: 'tcp_only',
    timeout: 120,
    fastOpen: 'false',
    blockedCidrs: ['198.51.100.0/24'],
  },
  client: { localPort: 1081, redirectPort: 12346, mode: 'tcp', bypassCidrs: ['192.0.2.0/24', '198.51.100.7/32'] },
});
