import * as aws from '@pulumi/aws';
import * as pulumi from '@pulumi/pulumi';
import type { StackConfig } from '../src/config';
import { renderCloudInit } from '../src/render';
import { HOST_GENERATION_TAG, TYPE_PROXY_HOST } from './constants';
import { debianAmiQuery, secondaryPrivateIp } from './placement';
import { vpcPlacement } from './vpc';
import { securityRules } from './security-rules';

export interface ProxyHostArgs {
  /** The validated stack config. */
  config: StackConfig;
  /** The proxy password (a secret). */
  password: pulumi.Input<string>;
}

/**
 * The encrypted proxy host: a Debian 12 instance running ss-server from the rendered cloud-init, its firewall, and a
 * stable ingress Elastic IP. Its network interface is created first and carries one extra private address in
 * dedicated-egress mode, so the user-data can name the egress bind address before the instance exists.
 */
export class ProxyHost extends pulumi.ComponentResource {
  /** The address clients dial (Elastic IP on the primary private address). */
  readonly ingressIp: pulumi.Output<string>;
  readonly networkInterfaceId: pulumi.Output<string>;
  readonly primaryPrivateIp: pulumi.Output<string>;
  /** The private address ss-server binds outbound connections to; undefined in shared mode. */
  readonly egressPrivateIp: pulumi.Output<string | undefined>;
  readonly instanceId: pulumi.Output<string>;
  readonly securityGroupId: pulumi.Output<string>;
  readonly amiId: pulumi.Output<string>;
  /** The host's own networks (the VPC blocks), refused by the proxy. */
  readonly hostNetworks: pulumi.Output<string[]>;

  constructor(name: string, args: ProxyHostArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_PROXY_HOST, name, {}, opts);
    const { config } = args;
    const host = config.host;
    const dedicated = config.egress.mode === 'dedicated';
    const parent = { parent: this };
    // Everything that must move together when the host is recreated carries the host generation.
    const generationTags = (suffix: string) => ({ Name: `${name}-${suffix}`, [HOST_GENERATION_TAG]: String(host.generation) });

    // The configured subnet and its VPC, or a default-for-AZ subnet of the default VPC where the instance type is offered.
    const placement = vpcPlacement(config.host.subnetId, config.host.instanceType, parent);

    const securityGroup = new aws.ec2.SecurityGroup(
      `${name}-sg`,
      { vpcId: placement.vpcId, description: 'sandbox-kit proxy host', tags: { Name: `${name}-sg` } },
      parent,
    );
    for (const rule of securityRules(config)) {
      const ruleArgs = {
        securityGroupId: securityGroup.id,
        ipProtocol: rule.ipProtocol,
        fromPort: rule.fromPort,
        toPort: rule.toPort,
        cidrIpv4: rule.cidrIpv4,
        description: rule.description,
      };
      if (rule.direction === 'ingress') new aws.vpc.SecurityGroupIngressRule(`${name}-${rule.key}`, ruleArgs, parent);
      else new aws.vpc.SecurityGroupEgressRule(`${name}-${rule.key}`, ruleArgs, parent);
    }

    const eni = new aws.ec2.NetworkInterface(
      `${name}-eni`,
      {
        subnetId: placement.subnetId,
        securityGroups: [securityGroup.id],
        privateIpsCount: dedicated ? 1 : 0,
        description: 'sandbox-kit proxy host',
        tags: generationTags('eni'),
      },
      { ...parent, replaceOnChanges: ['tags'] },
    );
    this.networkInterfaceId = eni.id;
    this.primaryPrivateIp = eni.privateIp;
    this.egressPrivateIp = dedicated
      ? pulumi.all([eni.privateIp, eni.privateIps]).apply(([primary, all]) => secondaryPrivateIp(primary, all))
      : pulumi.output(undefined);

    const ingressEip = new aws.ec2.Eip(
      `${name}-ingress-eip`,
      { domain: 'vpc', tags: generationTags('ingress') },
      { ...parent, replaceOnChanges: ['tags'] },
    );
    // Associated with the interface before the instance boots, so cloud-init can reach the package mirrors.
    const ingressAssociation = new aws.ec2.EipAssociation(
      `${name}-ingress-eip-assoc`,
      { allocationId: ingressEip.allocationId, networkInterfaceId: eni.id, privateIpAddress: eni.privateIp },
      { ...parent, deleteBeforeReplace: true },
    );
    this.ingressIp = ingressEip.publicIp;

    const keyPair = host.sshPublicKey
      ? new aws.ec2.KeyPair(`${name}-key`, { publicKey: host.sshPublicKey, tags: { Name: `${name}-key` } }, parent)
      : undefined;

    this.amiId = host.amiId ? pulumi.output(host.amiId) : aws.ec2.getAmiOutput(debianAmiQuery(host.architecture), parent).id;
    this.hostNetworks = placement.networks;

    const userData = pulumi
      .all([args.password, this.egressPrivateIp, placement.networks])
      .apply(([password, egressBindAddress, hostNetworks]) => renderCloudInit(config, { password, egressBindAddress, hostNetworks }));

    const instance = new aws.ec2.Instance(
      `${name}-instance`,
      {
        ami: this.amiId,
        instanceType: host.instanceType,
        keyName: keyPair?.keyName,
        primaryNetworkInterface: { networkInterfaceId: eni.id },
        userData: pulumi.secret(userData),
        userDataReplaceOnChange: true,
        metadataOptions: { httpEndpoint: 'enabled', httpTokens: 'required' },
        rootBlockDevice: { encrypted: true, volumeType: 'gp3' },
        tags: generationTags('instance'),
      },
      {
        ...parent,
        dependsOn: [ingressAssociation],
        // The interface can belong to one instance at a time: the old host goes before the new one comes.
        deleteBeforeReplace: true,
        // A newer Debian image must not replace a running host; pin host.amiId to choose the image.
        ignoreChanges: host.amiId ? [] : ['ami'],
      },
    );
    this.instanceId = instance.id;
    this.securityGroupId = securityGroup.id;

    this.registerOutputs({
      ingressIp: this.ingressIp,
      networkInterfaceId: this.networkInterfaceId,
      primaryPrivateIp: this.primaryPrivateIp,
      egressPrivateIp: this.egressPrivateIp,
      instanceId: this.instanceId,
      securityGroupId: this.securityGroupId,
      amiId: this.amiId,
    });
  }
}
