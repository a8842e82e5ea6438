import * as aws from '@pulumi/aws';
import * as pulumi from '@pulumi/pulumi';
import { EGRESS_GENERATION_TAG, TYPE_EGRESS_ADDRESS } from './constants';

export interface EgressAddressArgs {
  /** The proxy host's network interface. */
  networkInterfaceId: pulumi.Input<string>;
  /** Its secondary private address, the one ss-server binds outbound connections to (`-b`). */
  privateIp: pulumi.Input<string>;
  /** Bumping it allocates a new Elastic IP: the address the world sees changes, nothing else does. */
  generation: number;
}

/**
 * The public face of the proxy's outbound traffic: an Elastic IP on the host's secondary private address.
 * Rotation replaces only this Elastic IP and its association; the host, its ingress address and therefore every
 * client config stay as they are.
 */
export class EgressAddress extends pulumi.ComponentResource {
  /** The address destinations see. */
  readonly publicIp: pulumi.Output<string>;
  readonly allocationId: pulumi.Output<string>;

  constructor(name: string, args: EgressAddressArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_EGRESS_ADDRESS, name, {}, opts);
    const eip = new aws.ec2.Eip(
      `${name}-eip`,
      { domain: 'vpc', tags: { Name: `${name}-eip`, [EGRESS_GENERATION_TAG]: String(args.generation) } },
      // The generation lives in the tags; a tag change alone would be an in-place update, so ask for a replacement.
      { parent: this, replaceOnChanges: ['tags'] },
    );
    new aws.ec2.EipAssociation(
      `${name}-eip-assoc`,
      { allocationId: eip.allocationId, networkInterfaceId: args.networkInterfaceId, privateIpAddress: args.privateIp },
      // A private address takes one Elastic IP: release the old association before the new one is made.
      { parent: this, deleteBeforeReplace: true },
    );
    this.publicIp = eip.publicIp;
    this.allocationId = eip.allocationId;
    this.registerOutputs({ publicIp: this.publicIp, allocationId: this.allocationId });
  }
}
