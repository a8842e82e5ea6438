import { createHash } from 'node:crypto';
import * as pulumi from '@pulumi/pulumi';

/**
 * A pretend AWS for the Pulumi mocks. Identity follows the inputs: a resource whose inputs change gets a new id and,
 * for an Elastic IP, a new address, the way a replacement does on AWS. The same inputs always give the same values,
 * also across two runs of the program, so two runs can be compared resource by resource.
 */

export const MOCK_VPC = { id: 'vpc-0default0000000001', cidrBlock: '172.31.0.0/16' };
export const MOCK_CUSTOM_VPC = { id: 'vpc-0custom00000000002', cidrBlock: '10.20.0.0/16', secondary: '100.64.8.0/22' };
export const MOCK_AMI = 'ami-0d3b1a2c3e4f50617';
export const MOCK_ZONES = ['eu-west-1a', 'eu-west-1b'];
export const MOCK_SUBNETS = ['subnet-0bbbbbbbbbbbbbbbb', 'subnet-0aaaaaaaaaaaaaaaa'];

export interface RecordedResource {
  /** The id the pretend provider gave it. */
  id: string;
  type: string;
  name: string;
  inputs: Record<string, unknown>;
  /** What the pretend provider answered (outputs). */
  state: Record<string, unknown>;
  /** Paths of the inputs that arrived as secrets (their values are unwrapped in `inputs`). */
  secretInputs: string[];
}

export interface RecordedCall {
  token: string;
  inputs: Record<string, unknown>;
}

export interface MockCloud {
  resources: RecordedResource[];
  calls: RecordedCall[];
  mocks: pulumi.runtime.Mocks;
}

function stable(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stable).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => `${JSON.stringify(k)}:${stable(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

function isSecretValue(value: unknown): value is { value: unknown } {
  return (
    value !== null &&
    typeof value === 'object' &&
    (value as Record<string, unknown>)[pulumi.runtime.specialSigKey] === pulumi.runtime.specialSecretSig
  );
}

/** Replaces every secret wrapper by its value and lists where the secrets were. */
export function unwrapSecrets(value: unknown, path = '', found: string[] = []): { value: unknown; secrets: string[] } {
  if (isSecretValue(value)) {
    found.push(path);
    return { value: unwrapSecrets(value.value, path, found).value, secrets: found };
  }
  if (Array.isArray(value)) return { value: value.map((v, i) => unwrapSecrets(v, `${path}[${i}]`, found).value), secrets: found };
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = unwrapSecrets(v, path ? `${path}.${k}` : k, found).value;
    return { value: out, secrets: found };
  }
  return { value, secrets: found };
}

export function fingerprint(value: unknown): string {
  return createHash('sha256').update(stable(value)).digest('hex');
}

// Addresses are handed out in order of first appearance of an identity, shared across runs: no two identities
// ever get the same address, and one identity always gets the same one.
const publicIps = new Map<string, string>();
const privateNets = new Map<string, number>();

function publicIpFor(identity: string): string {
  let ip = publicIps.get(identity);
  if (!ip) {
    ip = `203.0.113.${publicIps.size + 1}`;
    publicIps.set(identity, ip);
  }
  return ip;
}

function privateNetFor(identity: string): number {
  let n = privateNets.get(identity);
  if (n === undefined) {
    n = privateNets.size + 16;
    privateNets.set(identity, n);
  }
  return n;
}

function newResourceState(type: string, name: string, inputs: Record<string, unknown>, identity: string): Record<string, unknown> {
  const short = identity.slice(0, 17);
  switch (type) {
    case 'aws:ec2/eip:Eip':
      return { ...inputs, publicIp: publicIpFor(identity), allocationId: `eipalloc-${short}` };
    case 'aws:ec2/networkInterface:NetworkInterface': {
      const net = privateNetFor(identity);
      const primary = `172.31.${net}.10`;
      const count = Number(inputs.privateIpsCount ?? 0);
      const secondaries = Array.from({ length: count }, (_, i) => `172.31.${net}.${11 + i}`);
      // AWS lists the addresses without order; the secondary comes first here on purpose.
      return { ...inputs, privateIp: primary, privateIps: [...secondaries, primary] };
    }
    case 'random:index/randomPassword:RandomPassword':
      return { ...inputs, result: `Gen3rated.${short}+Pw` };
    case 'aws:ec2/keyPair:KeyPair':
      return { ...inputs, keyName: `${name}-${short.slice(0, 8)}` };
    case 'aws:ec2/instance:Instance':
      return { ...inputs, privateIp: `172.31.${privateNetFor(identity)}.20` };
    case 'aws:s3/bucket:Bucket':
      return { ...inputs, bucket: `${name}-${short.slice(0, 8)}`, arn: `arn:aws:s3:::${name}-${short.slice(0, 8)}` };
    case 'aws:iam/role:Role':
    case 'aws:iam/instanceProfile:InstanceProfile':
      return { ...inputs, name: `${name}-${short.slice(0, 8)}`, arn: `arn:aws:iam::123456789012:${name}` };
    case 'aws:lb/loadBalancer:LoadBalancer':
      return {
        ...inputs,
        arn: `arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/net/${name}`,
        dnsName: `${name}-${short.slice(0, 8)}.elb.eu-west-1.amazonaws.com`,
        zoneId: 'Z2IFOLAFXWLO4F',
      };
    case 'aws:lb/targetGroup:TargetGroup':
      return { ...inputs, arn: `arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/${name}/${short.slice(0, 8)}` };
    case 'aws:acm/certificate:Certificate':
      return {
        ...inputs,
        arn: `arn:aws:acm:eu-west-1:123456789012:certificate/${short}`,
        domainValidationOptions: [
          {
            domainName: inputs.domainName,
            resourceRecordName: `_x1.${inputs.domainName}.`,
            resourceRecordType: 'CNAME',
            resourceRecordValue: '_y1.acm-validations.aws.',
          },
        ],
      };
    case 'aws:route53/record:Record':
      return { ...inputs, fqdn: String(inputs.name) };
    case 'aws:efs/fileSystem:FileSystem':
      return { ...inputs, dnsName: `fs-${short.slice(0, 8)}.efs.eu-west-1.amazonaws.com` };
    case 'aws:elasticache/replicationGroup:ReplicationGroup':
      return { ...inputs, primaryEndpointAddress: `master.${name}.${short.slice(0, 6)}.euw1.cache.amazonaws.com` };
    case 'aws:ec2/launchTemplate:LaunchTemplate':
      return { ...inputs, latestVersion: 1 };
    case 'aws:autoscaling/group:Group':
    case 'aws:elasticache/subnetGroup:SubnetGroup':
      return { ...inputs, name: `${name}-${short.slice(0, 8)}` };
    case 'command:remote:Command':
      return { ...inputs, stdout: 'building template sandbox-kit-proxy\ntemplateID: mocktemplate0001\n', stderr: '' };
    default:
      return { ...inputs };
  }
}

function callResult(token: string, inputs: Record<string, unknown>): Record<string, unknown> {
  switch (token) {
    case 'aws:ec2/getAmi:getAmi':
      return { id: MOCK_AMI, imageId: MOCK_AMI, name: 'debian-12-amd64-20250101-1000' };
    case 'aws:ec2/getVpc:getVpc':
      if (inputs.id === MOCK_CUSTOM_VPC.id) {
        return {
          id: MOCK_CUSTOM_VPC.id,
          cidrBlock: MOCK_CUSTOM_VPC.cidrBlock,
          cidrBlockAssociations: [{ cidrBlock: MOCK_CUSTOM_VPC.cidrBlock }, { cidrBlock: MOCK_CUSTOM_VPC.secondary }],
        };
      }
      return { id: MOCK_VPC.id, cidrBlock: MOCK_VPC.cidrBlock, cidrBlockAssociations: [{ cidrBlock: MOCK_VPC.cidrBlock }] };
    case 'aws:ec2/getSubnet:getSubnet':
      return { id: inputs.id, vpcId: MOCK_CUSTOM_VPC.id };
    case 'aws:ec2/getSubnets:getSubnets':
      return { ids: MOCK_SUBNETS };
    case 'aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings':
      return { locations: MOCK_ZONES };
    case 'aws:index/getRegion:getRegion':
      return { id: 'eu-west-1', name: 'eu-west-1', region: 'eu-west-1' };
    default:
      throw new Error(`mock cloud: unexpected call ${token}`);
  }
}

export function mockCloud(): MockCloud {
  const resources: RecordedResource[] = [];
  const calls: RecordedCall[] = [];
  const mocks: pulumi.runtime.Mocks = {
    newResource(args) {
      const unwrapped = unwrapSecrets(args.inputs);
      const inputs = unwrapped.value as Record<string, unknown>;
      const identity = fingerprint({ type: args.type, name: args.name, inputs });
      const state = newResourceState(args.type, args.name, inputs, identity);
      const id = `${args.name}-${identity.slice(0, 12)}`;
      resources.push({ id, type: args.type, name: args.name, inputs, state, secretInputs: unwrapped.secrets });
      return { id, state };
    },
    call(args) {
      calls.push({ token: args.token, inputs: args.inputs });
      return callResult(args.token, args.inputs);
    },
  };
  return { resources, calls, mocks };
}
