import type { SandboxHostInputs } from '../../../../src/render';
import { HOST_NETWORKS, SERVER_IP } from './stack-fixtures';

/** Fixed inputs for the sandbox-side renderers: a fake key, a fake bundle with fixed sums. */
export const API_KEY = 'sk_golden_test_api_key_0123456789abcdef';
export const BUNDLE = {
  bucket: 'sandbox-kit-bundle-0123456789',
  key: 'bundle-0123456789abcdef.zip',
  region: 'eu-west-1',
  sums: { 'sandbox-kit.js': 'a'.repeat(64), 'agent.js': 'b'.repeat(64) },
};
export const REDIS = 'rediss://master.sandbox-kit-catalog.abc123.euw1.cache.amazonaws.com:6379/0';
export const REDIS_AUTH_TOKEN = 'golden0test0redis0auth0token0123456789';

export function sandboxInputs(role: SandboxHostInputs['role']): SandboxHostInputs {
  return {
    role,
    apiKey: API_KEY,
    bundle: BUNDLE,
    proxyIngressIp: SERVER_IP,
    hostNetworks: HOST_NETWORKS,
    ...(role === 'single' ? {} : { catalog: REDIS, catalogPassword: REDIS_AUTH_TOKEN }),
    ...(role === 'fleet-gateway' ? { resumeUrl: 'http://sandbox-kit-nlb-0123.elb.eu-west-1.amazonaws.com:3001' } : {}),
  };
}
