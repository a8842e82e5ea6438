import { ConfigError, loadStackConfig } from '../../src/config';
import { renderClientConfig, renderCloudInit, renderNatChain } from '../../src/render';
import { createStack } from '../../infra/program';
import { DEBIAN_AMI_OWNER } from '../../infra/constants';
import * as pulumi from '@pulumi/pulumi';
import { mockCloud, MOCK_AMI, MOCK_CUSTOM_VPC, MOCK_SUBNETS, MOCK_VPC, MOCK_ZONES } from './helpers/mock-cloud';
import { resource, runProgram, setStackConfig, type ProgramRun } from './helpers/run-program';

const SG = 'aws:ec2/securityGroup:SecurityGroup';
const SG_INGRESS = 'aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule';
const SG_EGRESS = 'aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule';
const INSTANCE = 'aws:ec2/instance:Instance';
const ENI = 'aws:ec2/networkInterface:NetworkInterface';
const EIP = 'aws:ec2/eip:Eip';
const EIP_ASSOC = 'aws:ec2/eipAssociation:EipAssociation';
const PASSWORD_RESOURCE = 'random:index/randomPassword:RandomPassword';

const SSH_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICOBL00yABH8vxJlYT2RwfQyeZ5u0k8UtQ9ZhsQfflHT admin@example';
const PASSWORD = 'correct-horse-battery-staple-42';

const BASE = {
  host: { adminCidrs: ['198.51.100.0/24'], clientCidrs: ['192.0.2.0/24', '203.0.113.0/24'], sshPublicKey: SSH_KEY },
};

interface Rule {
  direction: string;
  protocol: unknown;
  fromPort: unknown;
  toPort: unknown;
  cidr: unknown;
}

const byText = (a: Rule, b: Rule) => JSON.stringify(a).localeCompare(JSON.stringify(b));

function rulesOf(run: ProgramRun): Rule[] {
  const sg = resource(run, SG, 'proxy-sg');
  // The proxy host's rules (the sandbox side has its own groups, tested in sandbox.test.ts).
  const rules = run.cloud.resources.filter((r) => (r.type === SG_INGRESS || r.type === SG_EGRESS) && r.name.startsWith('proxy-'));
  for (const r of rules) expect(r.inputs.securityGroupId).toBe(sg.id);
  return rules
    .map((r) => ({
      direction: r.type === SG_INGRESS ? 'ingress' : 'egress',
      protocol: r.inputs.ipProtocol,
      fromPort: r.inputs.fromPort,
      toPort: r.inputs.toPort,
      cidr: r.inputs.cidrIpv4,
    }))
    .sort(byText);
}

/** {type::name -> inputs} of a run. */
function inventory(run: ProgramRun): Map<string, string> {
  return new Map(run.cloud.resources.map((r) => [`${r.type}::${r.name}`, JSON.stringify(r.inputs)]));
}

/** The resources whose inputs differ between two runs (or that exist in one only). */
function changedResources(a: ProgramRun, b: ProgramRun): string[] {
  const before = inventory(a);
  const after = inventory(b);
  return [...new Set([...before.keys(), ...after.keys()])].filter((k) => before.get(k) !== after.get(k)).sort();
}

function eniAddresses(run: ProgramRun) {
  const eni = resource(run, ENI, 'proxy-eni');
  const primary = eni.state.privateIp as string;
  const secondary = (eni.state.privateIps as string[]).filter((ip) => ip !== primary);
  return { eni, primary, secondary };
}

describe('security group', () => {
  it('opens the proxy port for TCP and UDP per client CIDR, SSH per admin CIDR, and all egress', async () => {
    const run = await runProgram(BASE);
    expect(resource(run, SG, 'proxy-sg').inputs.vpcId).toBe(MOCK_VPC.id);
    expect(rulesOf(run)).toEqual(
      [
        { direction: 'egress', protocol: '-1', fromPort: undefined, toPort: undefined, cidr: '0.0.0.0/0' },
        { direction: 'ingress', protocol: 'tcp', fromPort: 22, toPort: 22, cidr: '198.51.100.0/24' },
        { direction: 'ingress', protocol: 'tcp', fromPort: 8388, toPort: 8388, cidr: '192.0.2.0/24' },
        { direction: 'ingress', protocol: 'tcp', fromPort: 8388, toPort: 8388, cidr: '203.0.113.0/24' },
        { direction: 'ingress', protocol: 'udp', fromPort: 8388, toPort: 8388, cidr: '192.0.2.0/24' },
        { direction: 'ingress', protocol: 'udp', fromPort: 8388, toPort: 8388, cidr: '203.0.113.0/24' },
        // The client CIDRs are not open to anyone: the sandbox host's address is let in too.
        ...(['tcp', 'udp'] as const).map((protocol) => ({
          direction: 'ingress',
          protocol,
          fromPort: 8388,
          toPort: 8388,
          cidr: `${resource(run, EIP, 'sandbox-eip').state.publicIp}/32`,
        })),
      ].sort(byText),
    );
  });

  it('defaults to the proxy port from anywhere and has no SSH rule without admin CIDRs', async () => {
    const run = await runProgram({ proxy: { port: 443 } });
    expect(rulesOf(run)).toEqual(
      [
        { direction: 'egress', protocol: '-1', fromPort: undefined, toPort: undefined, cidr: '0.0.0.0/0' },
        { direction: 'ingress', protocol: 'tcp', fromPort: 443, toPort: 443, cidr: '0.0.0.0/0' },
        { direction: 'ingress', protocol: 'udp', fromPort: 443, toPort: 443, cidr: '0.0.0.0/0' },
      ].sort(byText),
    );
    // No public key configured: no key pair, and the instance names none.
    expect(run.cloud.resources.some((r) => r.type === 'aws:ec2/keyPair:KeyPair')).toBe(false);
    expect(resource(run, INSTANCE, 'sandbox-instance').inputs.keyName).toBeUndefined();
    expect(resource(run, INSTANCE, 'proxy-instance').inputs.keyName).toBeUndefined();
  });
});

describe('proxy host', () => {
  it('boots the rendered cloud-init as user-data, replacing the host when it changes', async () => {
    const run = await runProgram(BASE, { value: PASSWORD, secret: true });
    const instance = resource(run, INSTANCE, 'proxy-instance');
    const { eni, secondary } = eniAddresses(run);
    expect(secondary).toHaveLength(1);
    const expected = renderCloudInit(loadStackConfig(BASE), {
      password: PASSWORD,
      egressBindAddress: secondary[0],
      hostNetworks: [MOCK_VPC.cidrBlock],
    });
    expect(instance.inputs.userData).toBe(expected);
    expect(instance.inputs.userDataReplaceOnChange).toBe(true);
    expect(instance.inputs.primaryNetworkInterface).toEqual({ networkInterfaceId: eni.id });
    expect(instance.inputs.instanceType).toBe('t3.micro');
    expect(instance.inputs.keyName).toBe(resource(run, 'aws:ec2/keyPair:KeyPair', 'proxy-key').state.keyName);
    expect(resource(run, 'aws:ec2/keyPair:KeyPair', 'proxy-key').inputs.publicKey).toBe(SSH_KEY);
    // The interface moves with the host, so the old instance must go first.
    expect(run.options.get('proxy-instance')?.opts.deleteBeforeReplace).toBe(true);
  });

  it('looks up the newest official Debian 12 image and keeps it until one is pinned', async () => {
    const run = await runProgram({ host: { instanceType: 't4g.small', architecture: 'arm64' } });
    // One lookup per host kind (proxy host, sandbox host), the same query.
    const ami = run.cloud.calls.filter((c) => c.token === 'aws:ec2/getAmi:getAmi');
    expect(ami).toHaveLength(2);
    expect(ami[1].inputs).toEqual(ami[0].inputs);
    expect(ami[0].inputs.owners).toEqual([DEBIAN_AMI_OWNER]);
    expect(ami[0].inputs.mostRecent).toBe(true);
    expect(ami[0].inputs.filters).toContainEqual({ name: 'name', values: ['debian-12-arm64-*'] });
    const instance = resource(run, INSTANCE, 'proxy-instance');
    expect(instance.inputs.ami).toBe(MOCK_AMI);
    expect(instance.inputs.instanceType).toBe('t4g.small');
    expect(run.options.get('proxy-instance')?.opts.ignoreChanges).toEqual(['ami']);

    const pinned = await runProgram({ host: { amiId: 'ami-0123456789abcdef0' } });
    expect(pinned.cloud.calls.some((c) => c.token === 'aws:ec2/getAmi:getAmi')).toBe(false);
    expect(resource(pinned, INSTANCE, 'proxy-instance').inputs.ami).toBe('ami-0123456789abcdef0');
    expect(pinned.options.get('proxy-instance')?.opts.ignoreChanges).toEqual([]);
  });

  it('places the host in a default subnet of a zone that offers the instance type', async () => {
    const run = await runProgram({ host: { instanceType: 'c7i.large' } });
    const offerings = run.cloud.calls.find((c) => c.token === 'aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings');
    expect(offerings?.inputs.filters).toEqual([{ name: 'instance-type', values: ['c7i.large'] }]);
    const subnets = run.cloud.calls.find((c) => c.token === 'aws:ec2/getSubnets:getSubnets');
    expect(subnets?.inputs.filters).toEqual([
      { name: 'vpc-id', values: [MOCK_VPC.id] },
      { name: 'default-for-az', values: ['true'] },
      { name: 'availability-zone', values: MOCK_ZONES },
    ]);
    expect(resource(run, ENI, 'proxy-eni').inputs.subnetId).toBe([...MOCK_SUBNETS].sort()[0]);
  });

  it('uses a configured subnet and refuses every block of its VPC as a destination', async () => {
    const config = { host: { subnetId: 'subnet-0123456789abcdef0' } };
    const run = await runProgram(config, { value: PASSWORD, secret: true });
    expect(resource(run, ENI, 'proxy-eni').inputs.subnetId).toBe('subnet-0123456789abcdef0');
    expect(resource(run, SG, 'proxy-sg').inputs.vpcId).toBe(MOCK_CUSTOM_VPC.id);
    expect(run.cloud.calls.some((c) => c.token === 'aws:ec2/getSubnets:getSubnets')).toBe(false);
    const { secondary } = eniAddresses(run);
    expect(resource(run, INSTANCE, 'proxy-instance').inputs.userData).toBe(
      renderCloudInit(loadStackConfig(config), {
        password: PASSWORD,
        egressBindAddress: secondary[0],
        hostNetworks: [MOCK_CUSTOM_VPC.cidrBlock, MOCK_CUSTOM_VPC.secondary],
      }),
    );
  });

  it('gives the primary private address the ingress Elastic IP, associated before the instance boots', async () => {
    const run = await runProgram(BASE);
    const { eni, primary } = eniAddresses(run);
    const eip = resource(run, EIP, 'proxy-ingress-eip');
    const assoc = resource(run, EIP_ASSOC, 'proxy-ingress-eip-assoc');
    expect(assoc.inputs).toEqual({ allocationId: eip.state.allocationId, networkInterfaceId: eni.id, privateIpAddress: primary });
    expect(run.values.ingressIp).toBe(eip.state.publicIp);
    expect(run.values.sshHost).toBe(eip.state.publicIp);
    expect(run.values.sshUser).toBe('admin');
    expect(run.options.get('proxy-instance')?.opts.dependsOn).toContainEqual(
      expect.objectContaining({ __name: 'proxy-ingress-eip-assoc' }),
    );
  });
});

describe('egress address', () => {
  it('puts its own Elastic IP on the secondary private address the server binds to', async () => {
    const run = await runProgram(BASE);
    const { eni, secondary } = eniAddresses(run);
    const eip = resource(run, EIP, 'egress-eip');
    expect(resource(run, EIP_ASSOC, 'egress-eip-assoc').inputs).toEqual({
      allocationId: eip.state.allocationId,
      networkInterfaceId: eni.id,
      privateIpAddress: secondary[0],
    });
    expect(run.values.egressIp).toBe(eip.state.publicIp);
    expect(run.values.egressIp).not.toBe(run.values.ingressIp);
    expect(resource(run, INSTANCE, 'proxy-instance').inputs.userData).toContain(`-b ${secondary[0]}`);
  });

  it('shared mode: one address, no secondary IP, no egress Elastic IP, no bind', async () => {
    const config = { ...BASE, egress: { mode: 'shared' } };
    const run = await runProgram(config, { value: PASSWORD, secret: true });
    const { eni, secondary } = eniAddresses(run);
    expect(eni.inputs.privateIpsCount).toBe(0);
    expect(secondary).toEqual([]);
    expect(run.cloud.resources.filter((r) => r.type === EIP && r.name.startsWith('proxy')).map((r) => r.name)).toEqual([
      'proxy-ingress-eip',
    ]);
    expect(run.cloud.resources.some((r) => r.type === 'sandbox-kit:aws:EgressAddress')).toBe(false);
    expect(run.values.egressIp).toBe(run.values.ingressIp);
    expect(run.values.egressMode).toBe('shared');
    const userData = resource(run, INSTANCE, 'proxy-instance').inputs.userData as string;
    expect(userData).toBe(renderCloudInit(loadStackConfig(config), { password: PASSWORD, hostNetworks: [MOCK_VPC.cidrBlock] }));
    expect(userData).not.toContain(' -b ');
  });
});

describe('outputs and secrets', () => {
  it('renders the client configs and NAT chain for the ingress address; password-bearing outputs are secret', async () => {
    const run = await runProgram(BASE, { value: PASSWORD, secret: true });
    const config = loadStackConfig(BASE);
    const target = { serverIp: run.values.ingressIp, password: PASSWORD };
    expect(run.values.clientConfigLocal).toBe(renderClientConfig(config, target, 'local'));
    expect(run.values.clientConfigTransparent).toBe(renderClientConfig(config, target, 'transparent'));
    expect(run.values.natChainScript).toBe(renderNatChain(config, run.values.ingressIp));
    expect(await pulumi.isSecret(run.outputs.clientConfigLocal)).toBe(true);
    expect(await pulumi.isSecret(run.outputs.clientConfigTransparent)).toBe(true);
    expect(await pulumi.isSecret(run.outputs.natChainScript)).toBe(false);
    expect(await pulumi.isSecret(run.outputs.ingressIp)).toBe(false);
    expect(resource(run, INSTANCE, 'proxy-instance').secretInputs).toEqual(['userData']);
    expect(run.cloud.resources.filter((r) => r.type === PASSWORD_RESOURCE).map((r) => r.name)).toEqual(['api-key']);
  });

  it('keeps a password stored in plain text secret all the same', async () => {
    const run = await runProgram(BASE, { value: PASSWORD, secret: false });
    expect(run.values.clientConfigLocal).toContain(JSON.stringify(PASSWORD));
    expect(await pulumi.isSecret(run.outputs.clientConfigLocal)).toBe(true);
    expect(resource(run, INSTANCE, 'proxy-instance').secretInputs).toEqual(['userData']);
  });

  it('generates a password when the stack sets none, and keeps it secret', async () => {
    const run = await runProgram(BASE);
    const generated = resource(run, PASSWORD_RESOURCE, 'proxy-password');
    expect(generated.inputs.length).toBeGreaterThanOrEqual(24);
    expect(generated.inputs.special).toBe(true);
    const password = generated.state.result as string;
    const { secondary } = eniAddresses(run);
    expect(resource(run, INSTANCE, 'proxy-instance').inputs.userData).toBe(
      renderCloudInit(loadStackConfig(BASE), { password, egressBindAddress: secondary[0], hostNetworks: [MOCK_VPC.cidrBlock] }),
    );
    expect(JSON.parse(run.values.clientConfigLocal).password).toBe(password);
    expect(await pulumi.isSecret(run.outputs.clientConfigLocal)).toBe(true);
    expect(await pulumi.isSecret(run.outputs.clientConfigTransparent)).toBe(true);
    expect(resource(run, INSTANCE, 'proxy-instance').secretInputs).toEqual(['userData']);
  });
});

describe('invalid config', () => {
  it('lists every problem and creates no resource', async () => {
    const cloud = mockCloud();
    await pulumi.runtime.setMocks(cloud.mocks, 'sandbox-kit', 'test', false);
    setStackConfig(
      { proxy: { port: 'eighty' }, host: { adminCidrs: ['10.0.0.0/33'] }, egres: { mode: 'shared' } },
      { value: 'short', secret: true },
    );
    let error: unknown;
    try {
      createStack();
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const key of ['sandbox-kit:proxy.port', 'sandbox-kit:host.adminCidrs[0]', 'sandbox-kit:egres', 'sandbox-kit:proxyPassword']) {
      expect(message).toContain(key);
    }
    expect(message).not.toContain('short');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(cloud.resources).toEqual([]);
    expect(cloud.calls).toEqual([]);
  });
});

describe('two runs', () => {
  it('an egress.generation bump replaces only the egress Elastic IP and its association', async () => {
    const first = await runProgram({ ...BASE, egress: { generation: 1 } }, { value: PASSWORD, secret: true });
    const second = await runProgram({ ...BASE, egress: { generation: 2 } }, { value: PASSWORD, secret: true });
    expect(changedResources(first, second)).toEqual([`${EIP}::egress-eip`, `${EIP_ASSOC}::egress-eip-assoc`].sort());
    // The generation sits in the tags, and a tag change is declared a replacement.
    expect(second.options.get('egress-eip')?.opts.replaceOnChanges).toEqual(['tags']);
    expect(second.options.get('egress-eip-assoc')?.opts.deleteBeforeReplace).toBe(true);
    expect(second.values.egressIp).not.toBe(first.values.egressIp);
    for (const key of ['ingressIp', 'clientConfigLocal', 'clientConfigTransparent', 'natChainScript'] as const) {
      expect(second.values[key]).toBe(first.values[key]);
    }
  });

  it('a host recreate (host.generation bump) gives a new ingress address and so new client configs', async () => {
    const first = await runProgram({ ...BASE, host: { ...BASE.host, generation: 1 } }, { value: PASSWORD, secret: true });
    const second = await runProgram({ ...BASE, host: { ...BASE.host, generation: 2 } }, { value: PASSWORD, secret: true });
    const changed = changedResources(first, second);
    for (const name of [
      `${ENI}::proxy-eni`,
      `${INSTANCE}::proxy-instance`,
      `${EIP}::proxy-ingress-eip`,
      `${EIP_ASSOC}::proxy-ingress-eip-assoc`,
    ]) {
      expect(changed).toContain(name);
    }
    // The egress address survives; it is re-associated to the new interface.
    expect(changed).not.toContain(`${EIP}::egress-eip`);
    expect(changed).toContain(`${EIP_ASSOC}::egress-eip-assoc`);
    expect(second.options.get('proxy-eni')?.opts.replaceOnChanges).toEqual(['tags']);
    expect(second.options.get('proxy-ingress-eip')?.opts.replaceOnChanges).toEqual(['tags']);
    expect(second.values.ingressIp).not.toBe(first.values.ingressIp);
    expect(second.values.egressIp).toBe(first.values.egressIp);
    expect(second.values.clientConfigLocal).not.toBe(first.values.clientConfigLocal);
    expect(second.values.clientConfigTransparent).not.toBe(first.values.clientConfigTransparent);
    expect(second.values.natChainScript).not.toBe(first.values.natChainScript);
    expect(JSON.parse(second.values.clientConfigLocal).server).toBe(second.values.ingressIp);
  });
});
