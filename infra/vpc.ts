import * as aws from '@pulumi/aws';
import * as pulumi from '@pulumi/pulumi';
import { pickSubnet, vpcNetworks } from './placement';

/** Where a host lands: its subnets (one for a single host, all for a fleet), their VPC and its blocks. */
export interface VpcPlacement {
  /** Every candidate subnet, sorted (a fleet spreads over them). */
  subnetIds: pulumi.Output<string[]>;
  /** The first of them (a single host, deterministic across runs). */
  subnetId: pulumi.Output<string>;
  vpcId: pulumi.Output<string>;
  networks: pulumi.Output<string[]>;
}

/**
 * The configured subnet and its VPC, or the default-for-AZ subnets of the default VPC in the zones that offer the
 * instance type. The proxy host and the sandbox side both land by this rule.
 */
export function vpcPlacement(subnetId: string | undefined, instanceType: string, opts: pulumi.InvokeOutputOptions): VpcPlacement {
  if (subnetId) {
    const subnet = aws.ec2.getSubnetOutput({ id: subnetId }, opts);
    const vpc = aws.ec2.getVpcOutput({ id: subnet.vpcId }, opts);
    return { subnetIds: pulumi.output([subnetId]), subnetId: pulumi.output(subnetId), vpcId: vpc.id, networks: vpc.apply(vpcNetworks) };
  }
  const vpc = aws.ec2.getVpcOutput({ default: true }, opts);
  const zones = aws.ec2.getInstanceTypeOfferingsOutput(
    { locationType: 'availability-zone', filters: [{ name: 'instance-type', values: [instanceType] }] },
    opts,
  ).locations;
  const subnets = aws.ec2.getSubnetsOutput(
    {
      filters: [
        { name: 'vpc-id', values: [vpc.id] },
        { name: 'default-for-az', values: ['true'] },
        { name: 'availability-zone', values: zones },
      ],
    },
    opts,
  );
  const where = `in the default VPC in a zone offering ${instanceType}`;
  return {
    subnetIds: subnets.ids.apply((ids) => {
      pickSubnet(ids, where);
      return [...ids].sort();
    }),
    subnetId: subnets.ids.apply((ids) => pickSubnet(ids, where)),
    vpcId: vpc.id,
    networks: vpc.apply(vpcNetworks),
  };
}
