import * as aws from '@pulumi/aws';
import type * as pulumi from '@pulumi/pulumi';
import type { SandboxGroup, SandboxRule } from './sandbox-rules';

export type SandboxGroups = Partial<Record<SandboxGroup, aws.ec2.SecurityGroup>>;

/**
 * One security group per role with all outbound traffic; createSandboxRules adds the ingress rules (one AWS rule
 * resource each, named by the rule's stable key; a rule whose source is another group refers to that group's id).
 */
export function createSandboxGroups(
  name: string,
  vpcId: pulumi.Input<string>,
  groups: readonly SandboxGroup[],
  opts: pulumi.CustomResourceOptions,
): SandboxGroups {
  const made: SandboxGroups = {};
  for (const group of groups) {
    const sg = new aws.ec2.SecurityGroup(
      `${name}-${group}-sg`,
      { vpcId, description: `sandbox-kit ${group}`, tags: { Name: `${name}-${group}-sg` } },
      opts,
    );
    new aws.vpc.SecurityGroupEgressRule(
      `${name}-${group}-egress-all`,
      { securityGroupId: sg.id, ipProtocol: '-1', cidrIpv4: '0.0.0.0/0', description: 'All outbound traffic' },
      opts,
    );
    made[group] = sg;
  }
  return made;
}

/** The ingress rules, one resource each, in the groups createSandboxGroups made. */
export function createSandboxRules(
  name: string,
  made: SandboxGroups,
  rules: readonly SandboxRule[],
  opts: pulumi.CustomResourceOptions,
): void {
  for (const rule of rules) {
    const target = made[rule.group];
    if (!target) throw new Error(`sandbox rule ${rule.key}: no ${rule.group} security group in this stack`);
    const source =
      'cidr' in rule.source
        ? { cidrIpv4: rule.source.cidr }
        : { referencedSecurityGroupId: requireGroup(made, rule.source.group, rule.key).id };
    new aws.vpc.SecurityGroupIngressRule(
      `${name}-${rule.key}`,
      {
        securityGroupId: target.id,
        ipProtocol: 'tcp',
        fromPort: rule.fromPort,
        toPort: rule.toPort,
        description: rule.description,
        ...source,
      },
      opts,
    );
  }
}

function requireGroup(groups: SandboxGroups, group: SandboxGroup, key: string): aws.ec2.SecurityGroup {
  const sg = groups[group];
  if (!sg) throw new Error(`sandbox rule ${key}: no ${group} security group in this stack`);
  return sg;
}
