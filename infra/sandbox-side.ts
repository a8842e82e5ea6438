import * as aws from '@pulumi/aws';
import * as pulumi from '@pulumi/pulumi';
import type { StackConfig } from '../src/config';
import { renderStackFile } from '../src/render';
import { platformApiKey } from './api-key';
import type { BundleFiles } from './bundle-files';
import { ECR_PULL_POLICY, HTTPS_PORT } from './constants';
import { ReleaseBundle } from './release-bundle';
import { createSandboxGroups, createSandboxRules } from './sandbox-groups';
import { SandboxFleet } from './sandbox-fleet';
import { VolumeStorage } from './volume-storage';
import { frontendNames, SandboxFrontend } from './sandbox-frontend';
import { SandboxHost } from './sandbox-host';
import { sandboxRules } from './sandbox-rules';
import { SandboxTemplate } from './sandbox-template';
import { vpcPlacement } from './vpc';

/** What the sandbox side hands back: where the E2B SDK points, the key, the template, and how to verify. */
export interface SandboxOutputs {
  apiUrl: pulumi.Output<string>;
  sandboxUrl: pulumi.Output<string>;
  /** The platform API key (secret). */
  apiKey: pulumi.Output<string>;
  templateAlias: string;
  /** The built template's ID (its alias when the build printed none, or before a build). */
  templateId: pulumi.Output<string>;
  /** `export E2B_API_URL=...` */
  e2bApiUrlExport: pulumi.Output<string>;
  /** `export E2B_SANDBOX_URL=...` */
  e2bSandboxUrlExport: pulumi.Output<string>;
  /** `export E2B_VOLUME_API_URL=...`: the SDK's `Volume` file calls (the platform API serves them; unset, the SDK sends them to E2B's cloud). */
  e2bVolumeApiUrlExport: pulumi.Output<string>;
  /** `export E2B_API_KEY=...` (secret). */
  e2bApiKeyExport: pulumi.Output<string>;
  /** Single host: its public address (SSH, verify); a fleet: a placeholder (its hosts come and go). */
  sandboxHost: pulumi.Output<string>;
  sandboxVerifyCommand: pulumi.Output<string>;
}

export interface SandboxSideArgs {
  config: StackConfig;
  /** The proxy password (a secret). */
  password: pulumi.Output<string>;
  proxyIngressIp: pulumi.Output<string>;
  /** The proxy's egress address: what verify expects a sandbox to be seen from. */
  egressIp: pulumi.Output<string>;
  bundle: BundleFiles;
  /** The SSH private key for the template build over SSH (a secret); undefined: no build by `pulumi up`. */
  sshPrivateKey?: pulumi.Output<string>;
  componentOptions?: pulumi.ComponentResourceOptions;
}

/** Why a single host's template is not built by this stack, or undefined when it is. */
export function templateBuildBlocker(config: StackConfig, sshKeySet: boolean): string | undefined {
  const missing = [
    ...(config.host.sshPublicKey ? [] : ['sandbox-kit:host.sshPublicKey']),
    ...(config.host.adminCidrs.length > 0 ? [] : ['sandbox-kit:host.adminCidrs (your address, for SSH)']),
    ...(sshKeySet ? [] : ['the secret sandbox-kit:sshPrivateKey']),
  ];
  return missing.length === 0
    ? undefined
    : `the proxy template is not built by this stack: it logs in over SSH and needs ${missing.join(', ')}`;
}

/**
 * The sandbox side: the release bundle in S3, the API key, the security groups, and either one sandbox host (the
 * default) or a fleet, with a load balancer in front when there is a fleet or a domain; the proxy template built on
 * it; the URLs and `export` lines the E2B SDK needs.
 */
export interface SandboxSide {
  outputs: SandboxOutputs;
  /** A single host's public address: the proxy must let it in when its client CIDRs are not open to anyone. */
  proxyClientIp?: pulumi.Output<string>;
}

export function createSandboxSide(args: SandboxSideArgs): SandboxSide {
  const { config } = args;
  const opts = args.componentOptions;
  const fleet = config.fleet.hosts > 1;
  const zone = config.dns.zoneId;
  const loadBalanced = fleet || zone !== undefined;

  const { key: apiKey, former: formerApiKeys } = platformApiKey('api-key');
  const bundle = new ReleaseBundle('bundle', { files: args.bundle }, opts);
  // The sandbox hosts pull template base images from ECR with their own role (docs/templates.md#images).
  new aws.iam.RolePolicy('sandbox-ecr-pull', { role: bundle.roleName, policy: JSON.stringify(ECR_PULL_POLICY) }, opts);
  const placement = vpcPlacement(config.host.subnetId, config.sandboxHost.instanceType, {});
  const target = pulumi.secret(pulumi.all([args.proxyIngressIp, args.password]).apply(([serverIp, password]) => ({ serverIp, password })));

  const groups = createSandboxGroups('sandbox', placement.vpcId, fleet ? ['host', 'gateway', 'redis', 'volumes'] : ['host'], {});
  // The rules name the VPC's blocks (a load balancer's health checks come from there). They come from lookups, which
  // are known in a preview too, so the rules show up there as well.
  placement.networks.apply((vpcNetworks) =>
    createSandboxRules('sandbox', groups, sandboxRules(config, { fleet, loadBalanced, vpcNetworks }), {}),
  );

  const frontend = loadBalanced
    ? new SandboxFrontend('frontend', { config, subnetIds: placement.subnetIds, vpcId: placement.vpcId }, opts)
    : undefined;
  const domain = config.gateway.domain;
  const names = frontendNames(domain);
  const apiPort = config.sandboxHost.apiPort;
  const urls = (address: pulumi.Input<string>) =>
    zone
      ? {
          apiUrl: pulumi.output(`https://${names.api}:${apiPort}`),
          sandboxUrl: pulumi.output(`https://${names.sandbox}${HTTPS_PORT === 443 ? '' : `:${HTTPS_PORT}`}`),
        }
      : {
          apiUrl: pulumi.interpolate`http://${address}:${apiPort}`,
          sandboxUrl: pulumi.interpolate`http://${address}:${config.gateway.port}`,
        };

  let templateId: pulumi.Output<string> = pulumi.output(config.template.alias);
  let proxyClientIp: pulumi.Output<string> | undefined;
  let sshHost: pulumi.Output<string>;
  let apiUrl: pulumi.Output<string>;
  let sandboxUrl: pulumi.Output<string>;
  if (!fleet) {
    const host = new SandboxHost(
      'sandbox',
      {
        config,
        apiKey,
        formerApiKeys,
        bundle: bundle.source,
        instanceProfileName: bundle.instanceProfileName,
        proxyIngressIp: args.proxyIngressIp,
        subnetId: placement.subnetId,
        vpcNetworks: placement.networks,
        securityGroupId: groups.host!.id,
      },
      opts,
    );
    sshHost = host.publicIp;
    proxyClientIp = host.publicIp;
    if (frontend) {
      new aws.lb.TargetGroupAttachment('sandbox-api-target', { targetGroupArn: frontend.apiTargetGroupArn, targetId: host.instanceId }, {});
      new aws.lb.TargetGroupAttachment(
        'sandbox-gateway-target',
        { targetGroupArn: frontend.gatewayTargetGroupArn, targetId: host.instanceId },
        {},
      );
    }
    ({ apiUrl, sandboxUrl } = urls(frontend ? frontend.dnsName : host.publicIp));
    const blocker = templateBuildBlocker(config, args.sshPrivateKey !== undefined);
    if (blocker === undefined && args.sshPrivateKey) {
      const template = new SandboxTemplate(
        'proxy-template',
        {
          config,
          host: host.publicIp,
          instanceId: host.instanceId,
          target,
          sshUser: config.host.sshUser,
          privateKey: args.sshPrivateKey,
          dependsOn: [host.reachable],
        },
        opts,
      );
      templateId = template.templateId;
    } else {
      pulumi.log.warn(`${blocker}; build it yourself: see docs/deploy-aws.md`);
    }
  } else {
    ({ apiUrl, sandboxUrl } = urls(frontend!.dnsName));
    const volumes = new VolumeStorage('volumes', { subnetIds: placement.subnetIds, securityGroupId: groups.volumes!.id }, opts);
    new SandboxFleet(
      'fleet',
      {
        config,
        apiKey,
        formerApiKeys,
        bundle: bundle.source,
        instanceProfileName: bundle.instanceProfileName,
        proxyIngressIp: args.proxyIngressIp,
        templateInput: target.apply((t) => ({ ...t, stackFile: renderStackFile(config) })),
        subnetIds: placement.subnetIds,
        vpcNetworks: placement.networks,
        hostSecurityGroupId: groups.host!.id,
        gatewaySecurityGroupId: groups.gateway!.id,
        redisSecurityGroupId: groups.redis!.id,
        apiTargetGroupArn: frontend!.apiTargetGroupArn,
        gatewayTargetGroupArn: frontend!.gatewayTargetGroupArn,
        apiUrl,
        volumesFileSystem: volumes.dnsName,
      },
      opts,
    );
    // Fleet hosts come and go with the Auto Scaling group: verify one of them by its address (docs/deploy-aws.md).
    sshHost = pulumi.output('<address of one fleet host>');
  }

  const outputs: SandboxOutputs = {
    apiUrl,
    sandboxUrl,
    apiKey,
    templateAlias: config.template.alias,
    templateId,
    e2bApiUrlExport: pulumi.interpolate`export E2B_API_URL=${apiUrl}`,
    e2bSandboxUrlExport: pulumi.interpolate`export E2B_SANDBOX_URL=${sandboxUrl}`,
    e2bVolumeApiUrlExport: pulumi.interpolate`export E2B_VOLUME_API_URL=${apiUrl}`,
    e2bApiKeyExport: pulumi.secret(pulumi.interpolate`export E2B_API_KEY=${apiKey}`),
    sandboxHost: sshHost,
    sandboxVerifyCommand: pulumi.interpolate`sandbox-kit verify --stack ${pulumi.getStack()} --sandbox-host ${sshHost} --egress-ip ${args.egressIp} --user ${config.host.sshUser} --ssh-key <private key file>`,
  };
  return { outputs, ...(proxyClientIp ? { proxyClientIp } : {}) };
}
