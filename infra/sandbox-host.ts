import * as aws from '@pulumi/aws';
import * as pulumi from '@pulumi/pulumi';
import type { StackConfig } from '../src/config';
import { DATA_VOLUME_DEVICE, renderSandboxCloudInit, type BundleSource } from '../src/render';
import { SANDBOX_GENERATION_TAG, TYPE_SANDBOX_HOST } from './constants';
import { debianAmiQuery } from './placement';

export interface SandboxHostArgs {
  config: StackConfig;
  /** The platform API key (a secret). */
  apiKey: pulumi.Input<string>;
  formerApiKeys: pulumi.Input<string[]>;
  bundle: pulumi.Input<BundleSource>;
  instanceProfileName: pulumi.Input<string>;
  /** The proxy's ingress address: sandboxes are let through to its port. */
  proxyIngressIp: pulumi.Input<string>;
  subnetId: pulumi.Input<string>;
  vpcNetworks: pulumi.Input<string[]>;
  securityGroupId: pulumi.Input<string>;
}

/**
 * The single sandbox host: a Debian 12 instance (cgroup v2) that runs the platform API, the runtime and the gateway
 * from the release bundle, with the Redis catalog on loopback; its disk and type from config, IMDSv2 only, the
 * rendered cloud-init as (secret) user-data, and a stable Elastic IP that survives a recreate (apiUrl stays).
 */
export class SandboxHost extends pulumi.ComponentResource {
  readonly publicIp: pulumi.Output<string>;
  readonly privateIp: pulumi.Output<string>;
  readonly instanceId: pulumi.Output<string>;
  /** The rendered user-data (secret), exactly as the instance got it. */
  readonly userData: pulumi.Output<string>;
  /** Done once the public address points at this instance: what an SSH session needs first. */
  readonly reachable: pulumi.Resource;

  constructor(name: string, args: SandboxHostArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_SANDBOX_HOST, name, {}, opts);
    const { config } = args;
    const parent = { parent: this };
    const sandbox = config.sandboxHost;

    const keyPair = config.host.sshPublicKey
      ? new aws.ec2.KeyPair(`${name}-key`, { publicKey: config.host.sshPublicKey, tags: { Name: `${name}-key` } }, parent)
      : undefined;
    const ami = config.host.amiId
      ? pulumi.output(config.host.amiId)
      : aws.ec2.getAmiOutput(debianAmiQuery(config.host.architecture), parent).id;

    this.userData = pulumi.secret(
      pulumi
        .all([args.apiKey, args.formerApiKeys, args.bundle, args.proxyIngressIp, args.vpcNetworks])
        .apply(([apiKey, formerApiKeys, bundle, proxyIngressIp, hostNetworks]) =>
          renderSandboxCloudInit(config, { role: 'single', apiKey, formerApiKeys, bundle, proxyIngressIp, hostNetworks }),
        ),
    );

    const instance = new aws.ec2.Instance(
      `${name}-instance`,
      {
        ami,
        instanceType: sandbox.instanceType,
        subnetId: args.subnetId,
        vpcSecurityGroupIds: [args.securityGroupId],
        associatePublicIpAddress: true,
        iamInstanceProfile: args.instanceProfileName,
        keyName: keyPair?.keyName,
        userData: this.userData,
        userDataReplaceOnChange: true,
        metadataOptions: { httpEndpoint: 'enabled', httpTokens: 'required' },
        rootBlockDevice: { encrypted: true, volumeType: 'gp3', volumeSize: sandbox.diskGb },
        // The kit's state (sandbox disks, layers) on a volume of its own: render/data-volume.ts mounts it.
        ebsBlockDevices: [
          {
            deviceName: DATA_VOLUME_DEVICE,
            encrypted: true,
            volumeType: 'gp3',
            volumeSize: sandbox.dataVolumeGb,
            deleteOnTermination: true,
          },
        ],
        tags: { Name: `${name}-instance`, [SANDBOX_GENERATION_TAG]: String(sandbox.generation) },
      },
      { ...parent, replaceOnChanges: ['tags'], ignoreChanges: config.host.amiId ? [] : ['ami'] },
    );
    // The address users configure (E2B_API_URL) outlives the instance: a recreate re-associates it.
    const eip = new aws.ec2.Eip(`${name}-eip`, { domain: 'vpc', tags: { Name: `${name}-eip` } }, parent);
    this.reachable = new aws.ec2.EipAssociation(
      `${name}-eip-assoc`,
      { allocationId: eip.allocationId, instanceId: instance.id },
      { ...parent, deleteBeforeReplace: true },
    );

    this.publicIp = eip.publicIp;
    this.privateIp = instance.privateIp;
    this.instanceId = instance.id;
    this.registerOutputs({ publicIp: this.publicIp, privateIp: this.privateIp, instanceId: this.instanceId });
  }
}
