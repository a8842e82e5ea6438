import type { StackConfig } from '../config';
import { renderClientConfig } from './client-config';
import { renderClientStart } from './client-start';
import { renderCloudInit, type ProxyHostInputs } from './cloud-init';
import { renderEgressAddressScript } from './egress-address';
import { renderNatChain } from './nat-chain';
import { renderServerAcl } from './server-acl';
import { renderServerConfig } from './server-config';
import { renderServerUnit } from './server-unit';
import { renderSysctl } from './sysctl';

export interface Artifact {
  /** File name in a render output directory. */
  name: string;
  content: string;
  /** File mode: 0o600 for anything holding the password, 0o755 for scripts, else 0o644. */
  mode: number;
  /** Whether the content holds the proxy password. */
  secret: boolean;
}

export interface ArtifactInputs extends ProxyHostInputs {
  /** The proxy's ingress address, what clients dial. */
  serverIp: string;
}

/** Every file name renderArtifacts can produce (egress-address.sh only with an egress bind address). */
export const ARTIFACT_NAMES = [
  'server.json',
  'client-local.json',
  'client-transparent.json',
  'nat-chain.sh',
  'client-start-local.sh',
  'client-start-transparent.sh',
  'sysctl.conf',
  'server.acl',
  'ss-server.service',
  'cloud-init.yaml',
  'egress-address.sh',
] as const;

/** Every artifact of a stack, by file name: what `sandbox-kit render` writes and what the lab executes. */
export function renderArtifacts(config: StackConfig, inputs: ArtifactInputs): Artifact[] {
  const target = { serverIp: inputs.serverIp, password: inputs.password };
  const artifacts: Artifact[] = [
    { name: 'server.json', content: renderServerConfig(config.proxy, inputs.password), mode: 0o600, secret: true },
    { name: 'client-local.json', content: renderClientConfig(config, target, 'local'), mode: 0o600, secret: true },
    { name: 'client-transparent.json', content: renderClientConfig(config, target, 'transparent'), mode: 0o600, secret: true },
    { name: 'nat-chain.sh', content: renderNatChain(config, inputs.serverIp), mode: 0o755, secret: false },
    { name: 'client-start-local.sh', content: renderClientStart(config, 'local'), mode: 0o755, secret: false },
    { name: 'client-start-transparent.sh', content: renderClientStart(config, 'transparent'), mode: 0o755, secret: false },
    { name: 'sysctl.conf', content: renderSysctl(config.proxy), mode: 0o644, secret: false },
    { name: 'server.acl', content: renderServerAcl(config.proxy, inputs.hostNetworks), mode: 0o644, secret: false },
    { name: 'ss-server.service', content: renderServerUnit({ egressBindAddress: inputs.egressBindAddress }), mode: 0o644, secret: false },
    { name: 'cloud-init.yaml', content: renderCloudInit(config, inputs), mode: 0o600, secret: true },
  ];
  if (inputs.egressBindAddress) {
    artifacts.push({ name: 'egress-address.sh', content: renderEgressAddressScript(inputs.egressBindAddress), mode: 0o755, secret: false });
  }
  return artifacts;
}
