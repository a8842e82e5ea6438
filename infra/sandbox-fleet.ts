import * as aws from '@pulumi/aws';
import * as pulumi from '@pulumi/pulumi';
import * as random from '@pulumi/random';
import type { StackConfig } from '../src/config';
import { DATA_VOLUME_DEVICE, renderSandboxCloudInit, type BundleSource, type SandboxRole, type TemplateBuildInput } from '../src/render';
import { REDIS_PORT, SANDBOX_GENERATION_TAG, TYPE_SANDBOX_FLEET } from './constants';
import { debianAmiQuery } from './placement';

export interface SandboxFleetArgs {
  config: StackConfig;
  apiKey: pulumi.Input<string>;
  formerApiKeys: pulumi.Input<string[]>;
  bundle: pulumi.Input<BundleSource>;
  instanceProfileName: pulumi.Input<string>;
  proxyIngressIp: pulumi.Input<string>;
  /** What every host builds its template from at boot (holds the password: a secret). */
  templateInput: pulumi.Input<TemplateBuildInput>;
  subnetIds: pulumi.Input<string[]>;
  vpcNetworks: pulumi.Input<string[]>;
  hostSecurityGroupId: pulumi.Input<string>;
  gatewaySecurityGroupId: pulumi.Input<string>;
  redisSecurityGroupId: pulumi.Input<string>;
  apiTargetGroupArn: pulumi.Input<string>;
  gatewayTargetGroupArn: pulumi.Input<string>;
  /** The platform API as the gateways reach it (through the load balancer). */
  apiUrl: pulumi.Input<string>;
  /** The DNS name of the volumes file system every host mounts (VolumeStorage). */
  volumesFileSystem: pulumi.Input<string>;
}

/** `rediss://HOST:PORT/0` of the fleet's catalog: TLS, as ElastiCache's in-transit encryption requires. */
export function catalogUrl(address: string, port = REDIS_PORT): string {
  return `rediss://${address}:${port}/0`;
}

/** ElastiCache AUTH tokens: 16 to 128 printable characters; letters and digits read safely anywhere. */
export const REDIS_AUTH_TOKEN_LENGTH = 64;

/**
 * The fleet: N sandbox hosts in an Auto Scaling group and M gateways in another, both from launch templates whose
 * user-data is the rendered cloud-init of their role, sharing one ElastiCache Redis (the catalog, and the platform
 * state that must be shared). Each host's interface gets delegated /28 prefixes: its sandboxes' addresses, routed by
 * the VPC to that host, so any gateway reaches any sandbox directly. A changed user-data (a new bundle, password or
 * ingress address) is a new launch template version, rolled out by an instance refresh; an egress rotation changes
 * none of it.
 */
export class SandboxFleet extends pulumi.ComponentResource {
  readonly catalog: pulumi.Output<string>;
  readonly hostGroupName: pulumi.Output<string>;
  readonly gatewayGroupName: pulumi.Output<string>;
  /** The rendered user-data of each role (secrets), exactly as the launch templates carry them (before base64). */
  readonly hostUserData: pulumi.Output<string>;
  readonly gatewayUserData: pulumi.Output<string>;

  constructor(name: string, args: SandboxFleetArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_SANDBOX_FLEET, name, {}, opts);
    const { config } = args;
    const parent = { parent: this };
    const fleet = config.fleet;

    const subnetGroup = new aws.elasticache.SubnetGroup(
      `${name}-redis-subnets`,
      { subnetIds: args.subnetIds, description: 'sandbox-kit catalog' },
      parent,
    );
    // The fleet's keys, quotas and audit trail live here: AUTH (a generated token, delivered to the hosts as a 0600
    // file) and TLS in transit, encrypted at rest.
    const authToken = new random.RandomPassword(`${name}-redis-auth`, { length: REDIS_AUTH_TOKEN_LENGTH, special: false }, parent);
    const redis = new aws.elasticache.ReplicationGroup(
      `${name}-redis`,
      {
        description: 'sandbox-kit: catalog, host registry, teams, keys, quotas, audit trail',
        engine: 'redis',
        nodeType: fleet.redisNodeType,
        numCacheClusters: 1,
        port: REDIS_PORT,
        subnetGroupName: subnetGroup.name,
        securityGroupIds: [args.redisSecurityGroupId],
        transitEncryptionEnabled: true,
        atRestEncryptionEnabled: true,
        authToken: pulumi.secret(authToken.result),
        tags: { Name: `${name}-redis` },
      },
      parent,
    );
    this.catalog = redis.primaryEndpointAddress.apply((address) => {
      if (!address) throw new Error('the ElastiCache replication group reports no primary endpoint');
      return catalogUrl(address);
    });
    const catalogPassword = pulumi.secret(authToken.result);

    const keyPair = config.host.sshPublicKey
      ? new aws.ec2.KeyPair(`${name}-key`, { publicKey: config.host.sshPublicKey, tags: { Name: `${name}-key` } }, parent)
      : undefined;
    const ami = config.host.amiId
      ? pulumi.output(config.host.amiId)
      : aws.ec2.getAmiOutput(debianAmiQuery(config.host.architecture), parent).id;

    const userData = (role: SandboxRole) =>
      pulumi.secret(
        pulumi
          .all([
            args.apiKey,
            args.formerApiKeys,
            args.bundle,
            args.proxyIngressIp,
            args.vpcNetworks,
            pulumi.all([this.catalog, catalogPassword]),
            args.apiUrl,
            pulumi.all([args.templateInput, args.volumesFileSystem]),
          ])
          .apply(
            ([
              apiKey,
              formerApiKeys,
              bundle,
              proxyIngressIp,
              hostNetworks,
              [catalog, catalogPassword],
              resumeUrl,
              [templateInput, volumesFileSystem],
            ]) =>
              renderSandboxCloudInit(config, {
                role,
                apiKey,
                formerApiKeys,
                bundle,
                proxyIngressIp,
                hostNetworks,
                catalog,
                catalogPassword,
                ...(role === 'fleet-gateway' ? { resumeUrl } : { templateInput, volumesFileSystem }),
              }),
          ),
      );
    this.hostUserData = userData('fleet-host');
    this.gatewayUserData = userData('fleet-gateway');

    const group = (
      role: 'hosts' | 'gateways',
      spec: {
        instanceType: string;
        count: number;
        diskGb: number;
        /** The data volume (render/data-volume.ts); none for a gateway. */
        dataVolumeGb?: number;
        userData: pulumi.Output<string>;
        securityGroupId: pulumi.Input<string>;
        targetGroupArn: pulumi.Input<string>;
        prefixes?: number;
      },
    ) => {
      const tags = { Name: `${name}-${role}`, [SANDBOX_GENERATION_TAG]: String(config.sandboxHost.generation) };
      const template = new aws.ec2.LaunchTemplate(
        `${name}-${role}-lt`,
        {
          imageId: ami,
          instanceType: spec.instanceType,
          keyName: keyPair?.keyName,
          iamInstanceProfile: { name: args.instanceProfileName },
          metadataOptions: { httpEndpoint: 'enabled', httpTokens: 'required' },
          blockDeviceMappings: [
            {
              deviceName: '/dev/xvda',
              ebs: { volumeSize: spec.diskGb, volumeType: 'gp3', encrypted: 'true', deleteOnTermination: 'true' },
            },
            ...(spec.dataVolumeGb
              ? [
                  {
                    deviceName: DATA_VOLUME_DEVICE,
                    ebs: { volumeSize: spec.dataVolumeGb, volumeType: 'gp3', encrypted: 'true', deleteOnTermination: 'true' },
                  },
                ]
              : []),
          ],
          networkInterfaces: [
            {
              deviceIndex: 0,
              associatePublicIpAddress: 'true',
              securityGroups: [spec.securityGroupId],
              ...(spec.prefixes ? { ipv4PrefixCount: spec.prefixes } : {}),
            },
          ],
          userData: pulumi.secret(spec.userData.apply((text) => Buffer.from(text).toString('base64'))),
          tagSpecifications: [{ resourceType: 'instance', tags }],
          tags,
        },
        parent,
      );
      return new aws.autoscaling.Group(
        `${name}-${role}`,
        {
          minSize: spec.count,
          maxSize: spec.count,
          desiredCapacity: spec.count,
          vpcZoneIdentifiers: args.subnetIds,
          launchTemplate: { id: template.id, version: template.latestVersion.apply(String) },
          targetGroupArns: [spec.targetGroupArn],
          healthCheckType: 'ELB',
          // cloud-init installs packages and the bundle (and a host builds its template) before the ports answer.
          healthCheckGracePeriod: 900,
          instanceRefresh: { strategy: 'Rolling', preferences: { minHealthyPercentage: 50 } },
          tags: Object.entries(tags).map(([key, value]) => ({ key, value, propagateAtLaunch: true })),
        },
        parent,
      );
    };

    const hosts = group('hosts', {
      instanceType: config.sandboxHost.instanceType,
      count: fleet.hosts,
      diskGb: config.sandboxHost.diskGb,
      dataVolumeGb: config.sandboxHost.dataVolumeGb,
      userData: this.hostUserData,
      securityGroupId: args.hostSecurityGroupId,
      targetGroupArn: args.apiTargetGroupArn,
      prefixes: fleet.prefixesPerHost,
    });
    const gateways = group('gateways', {
      instanceType: fleet.gatewayInstanceType,
      count: fleet.gateways,
      diskGb: 20,
      userData: this.gatewayUserData,
      securityGroupId: args.gatewaySecurityGroupId,
      targetGroupArn: args.gatewayTargetGroupArn,
    });
    this.hostGroupName = hosts.name;
    this.gatewayGroupName = gateways.name;
    this.registerOutputs({ catalog: this.catalog, hostGroupName: this.hostGroupName, gatewayGroupName: this.gatewayGroupName });
  }
}
