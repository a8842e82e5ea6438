import { join } from 'node:path';
import * as aws from '@pulumi/aws';
import * as pulumi from '@pulumi/pulumi';
import { type ClientMode, CONFIG_NAMESPACE, SECRET_KEYS } from '../src/config';
import { renderClientConfig, renderNatChain } from '../src/render';
import { readBundle } from './bundle-files';
import { EgressAddress } from './egress-address';
import { proxyPassword } from './password';
import { ProxyHost } from './proxy-host';
import { createSandboxSide, type SandboxOutputs } from './sandbox-side';
import { proxyProtocols } from './security-rules';
import { loadInfraConfig } from './stack-config';

/** What a stack hands back: what sandboxes need to use the proxy, and what `sandbox-kit verify` needs. */
export interface StackOutputs extends SandboxOutputs {
  /** The address clients dial. */
  ingressIp: pulumi.Output<string>;
  /** The address the world sees (= ingressIp in shared mode). */
  egressIp: pulumi.Output<string>;
  egressMode: 'dedicated' | 'shared';
  /** Client config of the local (SOCKS5) mode; holds the password, secret. */
  clientConfigLocal: pulumi.Output<string>;
  /** Client config of the transparent (redirect) mode; holds the password, secret. */
  clientConfigTransparent: pulumi.Output<string>;
  /** The transparent mode's NAT-chain script (no password in it). */
  natChainScript: pulumi.Output<string>;
  sshUser: string;
  sshHost: pulumi.Output<string>;
  /** The command that checks the deployed host (fill in the private key). */
  verifyCommand: pulumi.Output<string>;
}

export interface CreateStackOptions {
  /** Options given to each top-level component (tests pass transformations here to record resource options). */
  componentOptions?: pulumi.ComponentResourceOptions;
  /** The built release bundle; default dist/bundle of the repository. */
  bundleDir?: string;
}

export const DEFAULT_BUNDLE_DIR = join(__dirname, '..', 'dist', 'bundle');

/**
 * The whole program: validate the stack config once (nothing is created when it is invalid), then the proxy host,
 * its egress address, and the client artifacts rendered from the addresses AWS assigns.
 */
export function createStack(options: CreateStackOptions = {}): StackOutputs {
  const { config, passwordSet, sshKeySet } = loadInfraConfig(pulumi.runtime.allConfig());
  const stackConfig = new pulumi.Config(CONFIG_NAMESPACE);
  // The bundle is read before anything is created: a missing build stops the program with the fix, not halfway.
  const bundle = readBundle(options.bundleDir ?? DEFAULT_BUNDLE_DIR);
  const stackSecret = passwordSet ? stackConfig.requireSecret(SECRET_KEYS[0]) : undefined;
  const password = proxyPassword('proxy-password', stackSecret);

  const host = new ProxyHost('proxy', { config, password }, options.componentOptions);

  let egressIp = host.ingressIp;
  if (config.egress.mode === 'dedicated') {
    const egress = new EgressAddress(
      'egress',
      {
        networkInterfaceId: host.networkInterfaceId,
        privateIp: host.egressPrivateIp.apply((ip) => {
          if (ip === undefined) throw new Error('dedicated egress mode: the host has no secondary private address');
          return ip;
        }),
        generation: config.egress.generation,
      },
      options.componentOptions,
    );
    egressIp = egress.publicIp;
  }

  const clientConfig = (mode: ClientMode) =>
    pulumi.secret(
      pulumi.all([host.ingressIp, password]).apply(([serverIp, pw]) => renderClientConfig(config, { serverIp, password: pw }, mode)),
    );

  const sandboxSide = createSandboxSide({
    config,
    password,
    proxyIngressIp: host.ingressIp,
    egressIp,
    bundle,
    sshPrivateKey: sshKeySet ? stackConfig.requireSecret(SECRET_KEYS[1]) : undefined,
    componentOptions: options.componentOptions,
  });

  // The sandbox host's proxy client must reach the proxy port: when the client CIDRs do not already admit anyone,
  // the single host's address is let in (a fleet's hosts come and go: their addresses belong in host.clientCidrs).
  if (sandboxSide.proxyClientIp && !config.host.clientCidrs.includes('0.0.0.0/0')) {
    for (const protocol of proxyProtocols(config.proxy.mode)) {
      new aws.vpc.SecurityGroupIngressRule(`proxy-${protocol}-from-sandbox-host`, {
        securityGroupId: host.securityGroupId,
        ipProtocol: protocol,
        fromPort: config.proxy.port,
        toPort: config.proxy.port,
        cidrIpv4: pulumi.interpolate`${sandboxSide.proxyClientIp}/32`,
        description: `Shadowsocks ${protocol.toUpperCase()} ${config.proxy.port} from the sandbox host`,
      });
    }
  }

  return {
    ...sandboxSide.outputs,
    ingressIp: host.ingressIp,
    egressIp,
    egressMode: config.egress.mode,
    clientConfigLocal: clientConfig('local'),
    clientConfigTransparent: clientConfig('transparent'),
    natChainScript: host.ingressIp.apply((serverIp) => renderNatChain(config, serverIp)),
    sshUser: config.host.sshUser,
    sshHost: host.ingressIp,
    verifyCommand: pulumi.interpolate`sandbox-kit verify --stack ${pulumi.getStack()} --host ${host.ingressIp} --user ${config.host.sshUser} --ssh-key <private key file>`,
  };
}
