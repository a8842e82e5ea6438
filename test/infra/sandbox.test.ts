import * as pulumi from '@pulumi/pulumi';
import { ConfigError, loadStackConfig } from '../../src/config';
import { renderSandboxCloudInit, renderStackFile, SANDBOX_HOST_PATHS } from '../../src/render';
import { createStack } from '../../infra/program';
import { bundleDigest, readBundle } from '../../infra/bundle-files';
import { hexApiKey } from '../../infra/api-key';
import { mockCloud, MOCK_SUBNETS, MOCK_VPC } from './helpers/mock-cloud';
import { fakeBundle, resource, runProgram, setStackConfig, SSH_PRIVATE_KEY, type ProgramRun } from './helpers/run-program';

const INSTANCE = 'aws:ec2/instance:Instance';
const SG = 'aws:ec2/securityGroup:SecurityGroup';
const SG_INGRESS = 'aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule';
const COMMAND = 'command:remote:Command';
const LT = 'aws:ec2/launchTemplate:LaunchTemplate';
const ASG = 'aws:autoscaling/group:Group';
const REDIS = 'aws:elasticache/replicationGroup:ReplicationGroup';
const NLB = 'aws:lb/loadBalancer:LoadBalancer';
const LISTENER = 'aws:lb/listener:Listener';
const RECORD = 'aws:route53/record:Record';
const OBJECT = 'aws:s3/bucketObjectv2:BucketObjectv2';
const EFS = 'aws:efs/fileSystem:FileSystem';
const MOUNT_TARGET = 'aws:efs/mountTarget:MountTarget';

const SSH_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICOBL00yABH8vxJlYT2RwfQyeZ5u0k8UtQ9ZhsQfflHT admin@example';
const PASSWORD = { value: 'correct-horse-battery-staple-42', secret: true };
const ADMIN = '198.51.100.0/24';
const BASE = {
  host: { adminCidrs: [ADMIN], sshPublicKey: SSH_KEY },
  sandboxHost: { apiCidrs: ['192.0.2.0/24'], gatewayCidrs: ['0.0.0.0/0'] },
};
const FLEET = { ...BASE, fleet: { hosts: 3, gateways: 2 } };

const names = (run: ProgramRun, type: string) =>
  run.cloud.resources
    .filter((r) => r.type === type)
    .map((r) => r.name)
    .sort();

function sandboxIngress(run: ProgramRun) {
  return run.cloud.resources
    .filter((r) => r.type === SG_INGRESS && r.name.startsWith('sandbox-'))
    .map((r) => ({
      name: r.name,
      from: r.inputs.fromPort,
      to: r.inputs.toPort,
      cidr: r.inputs.cidrIpv4,
      group: r.inputs.securityGroupId,
      source: r.inputs.referencedSecurityGroupId,
    }));
}

function bundleSource(run: ProgramRun) {
  const bucket = resource(run, 'aws:s3/bucket:Bucket', 'bundle-bucket');
  const object = resource(run, OBJECT, 'bundle-object');
  return {
    bucket: bucket.state.bucket as string,
    key: object.inputs.key as string,
    region: 'eu-west-1',
    sums: readBundle(run.bundleDir).sums,
  };
}

const apiKeyOf = (run: ProgramRun) => run.values.apiKey;
const apiSecretOf = (run: ProgramRun) => resource(run, 'random:index/randomPassword:RandomPassword', 'api-key').state.result as string;
/** The key an earlier release handed out from the same secret: still in the key file. */
const formerKeysOf = (run: ProgramRun) => [`e2b_${apiSecretOf(run)}`];
const ingressOf = (run: ProgramRun) => run.values.ingressIp;
/** The platform's command line in a user data: what the sandbox host runs. */
const platformLine = (userData: string) => userData.split('\n').find((l) => l.includes('ExecStart=') && l.includes(' platform ')) ?? '';
/** The flags that pin the proxy template's sandboxes to the stack's proxy, as `sandbox-kit up` pins them locally. */
const pinned = (run: ProgramRun, alias: string, port: number) =>
  `--stack-egress-template ${alias} --stack-egress-proxy ${ingressOf(run)}:${port}`;

describe('single sandbox host', () => {
  it('boots the rendered cloud-init with the bundle, key and proxy address, from config type and disk', async () => {
    const run = await runProgram({ ...BASE, sandboxHost: { ...BASE.sandboxHost, instanceType: 'm7i.xlarge', diskGb: 120 } }, PASSWORD, {
      sshPrivateKey: SSH_PRIVATE_KEY,
    });
    const instance = resource(run, INSTANCE, 'sandbox-instance');
    const config = loadStackConfig({ ...BASE, sandboxHost: { ...BASE.sandboxHost, instanceType: 'm7i.xlarge', diskGb: 120 } });
    expect(instance.inputs.userData).toBe(
      renderSandboxCloudInit(config, {
        role: 'single',
        apiKey: apiKeyOf(run),
        formerApiKeys: formerKeysOf(run),
        bundle: bundleSource(run),
        proxyIngressIp: ingressOf(run),
        hostNetworks: [MOCK_VPC.cidrBlock],
      }),
    );
    expect(instance.secretInputs).toEqual(['userData']);
    // The proxy template's sandboxes leave only through the stack's proxy: its alias, the ingress address its client
    // dials (the template build's serverIp) and the proxy port.
    expect(platformLine(instance.inputs.userData as string)).toContain(pinned(run, config.template.alias, config.proxy.port));
    expect(instance.inputs).toMatchObject({
      instanceType: 'm7i.xlarge',
      rootBlockDevice: { encrypted: true, volumeType: 'gp3', volumeSize: 120 },
      metadataOptions: { httpEndpoint: 'enabled', httpTokens: 'required' },
      userDataReplaceOnChange: true,
      iamInstanceProfile: resource(run, 'aws:iam/instanceProfile:InstanceProfile', 'bundle-profile').state.name,
      vpcSecurityGroupIds: [resource(run, SG, 'sandbox-host-sg').id],
    });
    expect(run.options.get('sandbox-instance')?.opts.replaceOnChanges).toEqual(['tags']);
    // No fleet and no domain: no load balancer, no Redis, no Auto Scaling group.
    for (const type of [NLB, REDIS, ASG, LT]) expect(names(run, type)).toEqual([]);
    expect(run.values.apiUrl).toBe(`http://${resource(run, 'aws:ec2/eip:Eip', 'sandbox-eip').state.publicIp}:3001`);
    expect(run.values.sandboxUrl).toBe(`http://${resource(run, 'aws:ec2/eip:Eip', 'sandbox-eip').state.publicIp}:3000`);
  });

  it("pins the stack's own template alias to its proxy port: both follow the stack config", async () => {
    const stack = { ...BASE, template: { alias: 'team-egress' }, proxy: { port: 9443 } };
    const run = await runProgram(stack, PASSWORD, { sshPrivateKey: SSH_PRIVATE_KEY });
    const line = platformLine(resource(run, INSTANCE, 'sandbox-instance').inputs.userData as string);
    expect(line).toContain(pinned(run, 'team-egress', 9443));
    expect(line.match(/--stack-egress-/g)).toHaveLength(2);
  });

  it('opens the API and gateway ports to their CIDRs and SSH to the admin CIDRs only', async () => {
    const run = await runProgram(BASE, PASSWORD);
    const sg = resource(run, SG, 'sandbox-host-sg').id;
    const rules = sandboxIngress(run);
    expect(rules.every((r) => r.group === sg)).toBe(true);
    expect(rules.map(({ from, to, cidr }) => ({ from, to, cidr }))).toEqual(
      expect.arrayContaining([
        { from: 3001, to: 3001, cidr: '192.0.2.0/24' },
        { from: 3000, to: 3000, cidr: '0.0.0.0/0' },
        { from: 22, to: 22, cidr: ADMIN },
      ]),
    );
    expect(rules).toHaveLength(3);
  });

  it('stores the bundle as a private, content-addressed S3 object the instance role alone may read', async () => {
    const run = await runProgram(BASE, PASSWORD);
    const object = resource(run, OBJECT, 'bundle-object');
    expect(object.inputs.key).toBe(`bundle-${bundleDigest(readBundle(run.bundleDir).sums).slice(0, 16)}.zip`);
    expect(object.inputs.contentType).toBe('application/zip');
    expect(resource(run, 'aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock', 'bundle-private').inputs).toMatchObject({
      blockPublicAcls: true,
      blockPublicPolicy: true,
      ignorePublicAcls: true,
      restrictPublicBuckets: true,
    });
    const policy = JSON.parse(resource(run, 'aws:iam/rolePolicy:RolePolicy', 'bundle-read').inputs.policy as string);
    const bucket = resource(run, 'aws:s3/bucket:Bucket', 'bundle-bucket');
    expect(policy.Statement).toEqual([{ Effect: 'Allow', Action: ['s3:GetObject'], Resource: [`${bucket.state.arn}/*`] }]);

    const next = await runProgram(BASE, PASSWORD, { bundleDir: fakeBundle('r2') });
    expect(resource(next, OBJECT, 'bundle-object').inputs.key).not.toBe(object.inputs.key);
    expect(resource(next, INSTANCE, 'sandbox-instance').inputs.userData).not.toBe(
      resource(run, INSTANCE, 'sandbox-instance').inputs.userData,
    );
  });

  it("gives the sandbox hosts' role read-only ECR pulls (template base images), and nothing that writes", async () => {
    const run = await runProgram(BASE, PASSWORD);
    const ecr = resource(run, 'aws:iam/rolePolicy:RolePolicy', 'sandbox-ecr-pull');
    // The role of the hosts' instance profile.
    expect(ecr.inputs.role).toBe(resource(run, 'aws:iam/instanceProfile:InstanceProfile', 'bundle-profile').inputs.role);
    const policy = JSON.parse(ecr.inputs.policy as string) as { Statement: Array<{ Effect: string; Action: string[] }> };
    const actions = policy.Statement.flatMap((s) => s.Action);
    expect(actions).toEqual(expect.arrayContaining(['ecr:GetAuthorizationToken', 'ecr:BatchGetImage', 'ecr:GetDownloadUrlForLayer']));
    expect(actions.filter((a) => /Put|Upload|Delete|Create|Complete|Initiate|Set/.test(a))).toEqual([]);
    expect(policy.Statement.every((s) => s.Effect === 'Allow')).toBe(true);
  });

  it('fails before creating anything when the bundle has not been built', async () => {
    const cloud = mockCloud();
    await pulumi.runtime.setMocks(cloud.mocks, 'sandbox-kit', 'test', false);
    setStackConfig(BASE, PASSWORD);
    expect(() => createStack({ bundleDir: '/nonexistent/dist/bundle' })).toThrow(
      /release bundle \/nonexistent\/dist\/bundle not found; build it first/,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(cloud.resources).toEqual([]);
  });
});

describe('proxy access from the sandbox host', () => {
  it('lets the single host reach the proxy port when the client CIDRs are not open to anyone', async () => {
    const run = await runProgram({ ...BASE, host: { ...BASE.host, clientCidrs: ['192.0.2.0/24'] } }, PASSWORD);
    const ip = resource(run, 'aws:ec2/eip:Eip', 'sandbox-eip').state.publicIp;
    const rules = run.cloud.resources.filter((r) => r.type === SG_INGRESS && r.name.endsWith('-from-sandbox-host'));
    expect(
      rules.map((r) => ({
        protocol: r.inputs.ipProtocol,
        port: r.inputs.fromPort,
        cidr: r.inputs.cidrIpv4,
        group: r.inputs.securityGroupId,
      })),
    ).toEqual([
      { protocol: 'tcp', port: 8388, cidr: `${ip}/32`, group: resource(run, SG, 'proxy-sg').id },
      { protocol: 'udp', port: 8388, cidr: `${ip}/32`, group: resource(run, SG, 'proxy-sg').id },
    ]);
    const open = await runProgram(BASE, PASSWORD);
    expect(open.cloud.resources.filter((r) => r.name.endsWith('-from-sandbox-host'))).toEqual([]);
  });
});

describe('SSH is never open to the world', () => {
  it('refuses 0.0.0.0/0 as an admin CIDR and creates nothing', async () => {
    const cloud = mockCloud();
    await pulumi.runtime.setMocks(cloud.mocks, 'sandbox-kit', 'test', false);
    setStackConfig({ host: { adminCidrs: ['0.0.0.0/0'] } }, PASSWORD);
    expect(() => createStack({ bundleDir: fakeBundle() })).toThrow(ConfigError);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(cloud.resources).toEqual([]);
  });

  it('in every shape of the stack, no SSH rule is wider than a /8', async () => {
    for (const config of [BASE, FLEET, { ...BASE, dns: { zoneId: 'Z0123456789ABCDEFGHIJ' }, gateway: { domain: 'sandbox.example.com' } }]) {
      const run = await runProgram(config, PASSWORD, { sshPrivateKey: SSH_PRIVATE_KEY });
      const ssh = run.cloud.resources.filter(
        (r) => r.type === SG_INGRESS && (r.inputs.fromPort as number) <= 22 && (r.inputs.toPort as number) >= 22,
      );
      expect(ssh.length).toBeGreaterThan(0);
      for (const rule of ssh) {
        // Gateways may reach every port of a fleet host: from their group, never from a CIDR.
        if (rule.inputs.cidrIpv4 === undefined) {
          expect(rule.inputs.referencedSecurityGroupId).toBe(resource(run, SG, 'sandbox-gateway-sg').id);
          continue;
        }
        expect(rule.inputs.cidrIpv4).toBe(ADMIN);
      }
    }
  });
});

describe('proxy template', () => {
  const triggersOf = (run: ProgramRun) => resource(run, COMMAND, 'proxy-template-build').inputs.triggers as string[];

  it('is built over SSH on the sandbox host with the client files on stdin, all secret', async () => {
    const run = await runProgram(BASE, PASSWORD, { sshPrivateKey: SSH_PRIVATE_KEY });
    const build = resource(run, COMMAND, 'proxy-template-build');
    const config = loadStackConfig(BASE);
    expect(build.inputs.create).toBe(`sudo -n ${SANDBOX_HOST_PATHS.buildTemplate}`);
    expect(JSON.parse(build.inputs.stdin as string)).toEqual({
      serverIp: ingressOf(run),
      password: PASSWORD.value,
      stackFile: renderStackFile(config),
    });
    expect(build.inputs.connection).toEqual({
      host: resource(run, 'aws:ec2/eip:Eip', 'sandbox-eip').state.publicIp,
      user: 'admin',
      port: 22,
      privateKey: SSH_PRIVATE_KEY,
    });
    // The triggers are digests of secret files, so they are kept secret too.
    expect(build.secretInputs.sort()).toEqual(['connection', 'stdin', 'triggers']);
    expect((build.inputs.create as string) + JSON.stringify(build.inputs.triggers)).not.toContain(PASSWORD.value);
    expect(run.options.get('proxy-template-build')?.opts.replaceOnChanges).toEqual(['triggers']);
    expect(run.values.templateId).toBe('mocktemplate0001');
    expect(run.values.templateAlias).toBe('sandbox-kit-proxy');
  });

  it('rebuilds on a proxy host recreate, a password change and a sandbox host recreate; not on an egress rotation', async () => {
    const key = { sshPrivateKey: SSH_PRIVATE_KEY };
    const base = triggersOf(await runProgram({ ...BASE, egress: { generation: 1 } }, PASSWORD, key));
    const rotated = await runProgram({ ...BASE, egress: { generation: 2 } }, PASSWORD, key);
    expect(triggersOf(rotated)).toEqual(base);
    expect(resource(rotated, COMMAND, 'proxy-template-build').inputs.stdin).toBe(
      resource(await runProgram({ ...BASE, egress: { generation: 1 } }, PASSWORD, key), COMMAND, 'proxy-template-build').inputs.stdin,
    );
    const recreated = triggersOf(await runProgram({ ...BASE, host: { ...BASE.host, generation: 2 } }, PASSWORD, key));
    expect(recreated[1]).not.toBe(base[1]);
    const repassworded = triggersOf(await runProgram(BASE, { value: 'another-password-of-enough-length', secret: true }, key));
    expect(repassworded[1]).not.toBe(base[1]);
    const newSandboxHost = triggersOf(await runProgram({ ...BASE, sandboxHost: { ...BASE.sandboxHost, generation: 2 } }, PASSWORD, key));
    expect(newSandboxHost[0]).not.toBe(base[0]);
    expect(newSandboxHost[1]).toBe(base[1]);
    const otherTemplate = triggersOf(await runProgram({ ...BASE, template: { memoryMB: 2048 } }, PASSWORD, key));
    expect(otherTemplate[2]).not.toBe(base[2]);
  });

  it('an egress rotation replaces nothing on the sandbox side', async () => {
    const key = { sshPrivateKey: SSH_PRIVATE_KEY };
    const first = await runProgram({ ...BASE, egress: { generation: 1 } }, PASSWORD, key);
    const second = await runProgram({ ...BASE, egress: { generation: 2 } }, PASSWORD, key);
    const inventory = (run: ProgramRun) => new Map(run.cloud.resources.map((r) => [`${r.type}::${r.name}`, JSON.stringify(r.inputs)]));
    const a = inventory(first);
    const b = inventory(second);
    const changed = [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k)).sort();
    expect(changed).toEqual(['aws:ec2/eip:Eip::egress-eip', 'aws:ec2/eipAssociation:EipAssociation::egress-eip-assoc']);
  });

  it('is not built without an SSH key, and the stack says why', async () => {
    const run = await runProgram(BASE, PASSWORD);
    expect(names(run, COMMAND)).toEqual([]);
    expect(run.values.templateId).toBe('sandbox-kit-proxy');
  });
});

describe('outputs', () => {
  it('hands out the API key and its export line as secrets, the URLs in plain text', async () => {
    const run = await runProgram(BASE, PASSWORD);
    // E2B's form, which SDKs 2.27 to 2.45 check before sending anything.
    expect(run.values.apiKey).toMatch(/^e2b_[0-9a-f]{40}$/);
    expect(run.values.apiKey).toBe(hexApiKey(apiSecretOf(run)));
    expect(await pulumi.isSecret(run.outputs.apiKey)).toBe(true);
    expect(await pulumi.isSecret(run.outputs.e2bApiKeyExport)).toBe(true);
    expect(await pulumi.isSecret(run.outputs.e2bApiUrlExport)).toBe(false);
    expect(await pulumi.isSecret(run.outputs.e2bSandboxUrlExport)).toBe(false);
    expect(await pulumi.isSecret(run.outputs.e2bVolumeApiUrlExport)).toBe(false);
    expect(run.values.e2bApiKeyExport).toBe(`export E2B_API_KEY=${run.values.apiKey}`);
    expect(run.values.e2bApiUrlExport).toBe(`export E2B_API_URL=${run.values.apiUrl}`);
    expect(run.values.e2bSandboxUrlExport).toBe(`export E2B_SANDBOX_URL=${run.values.sandboxUrl}`);
    // The SDK's Volume file calls go to the platform API, not to E2B's cloud.
    expect(run.values.e2bVolumeApiUrlExport).toBe(`export E2B_VOLUME_API_URL=${run.values.apiUrl}`);
    expect(resource(run, 'random:index/randomPassword:RandomPassword', 'api-key').inputs).toMatchObject({ special: false, length: 40 });
  });
});

describe('domain with a hosted zone', () => {
  const DOMAIN = { ...BASE, dns: { zoneId: 'Z0123456789ABCDEFGHIJ' }, gateway: { domain: 'sandbox.example.com' } };

  it('puts TLS on a load balancer with an ACM certificate, and three alias records', async () => {
    const run = await runProgram(DOMAIN, PASSWORD);
    const cert = resource(run, 'aws:acm/certificate:Certificate', 'frontend-cert');
    expect(cert.inputs).toMatchObject({
      domainName: 'sandbox.example.com',
      subjectAlternativeNames: ['*.sandbox.example.com'],
      validationMethod: 'DNS',
    });
    const records = run.cloud.resources.filter((r) => r.type === RECORD && r.inputs.type === 'A');
    expect(records.map((r) => r.inputs.name).sort()).toEqual([
      '*.sandbox.example.com',
      'api.sandbox.example.com',
      'sandbox.sandbox.example.com',
    ]);
    const nlb = resource(run, NLB, 'frontend-nlb');
    for (const record of records)
      expect(record.inputs.aliases).toEqual([{ name: nlb.state.dnsName, zoneId: nlb.state.zoneId, evaluateTargetHealth: true }]);
    const listeners = run.cloud.resources
      .filter((r) => r.type === LISTENER)
      .map((r) => ({ port: r.inputs.port, protocol: r.inputs.protocol }));
    expect(listeners.sort((a, b) => Number(a.port) - Number(b.port))).toEqual([
      { port: 443, protocol: 'TLS' },
      { port: 3001, protocol: 'TLS' },
    ]);
    expect(run.values.apiUrl).toBe('https://api.sandbox.example.com:3001');
    expect(run.values.sandboxUrl).toBe('https://sandbox.sandbox.example.com');
    // The single host sits behind the load balancer: its target groups hold it.
    expect(names(run, 'aws:lb/targetGroupAttachment:TargetGroupAttachment')).toEqual(['sandbox-api-target', 'sandbox-gateway-target']);
  });
});

describe('fleet', () => {
  it('N hosts and M gateways in Auto Scaling groups behind a load balancer, sharing ElastiCache', async () => {
    const run = await runProgram(FLEET, PASSWORD, { sshPrivateKey: SSH_PRIVATE_KEY });
    expect(names(run, INSTANCE)).toEqual(['proxy-instance']);
    expect(names(run, COMMAND)).toEqual([]);
    const hosts = resource(run, ASG, 'fleet-hosts');
    const gateways = resource(run, ASG, 'fleet-gateways');
    expect(hosts.inputs).toMatchObject({ minSize: 3, maxSize: 3, desiredCapacity: 3 });
    expect(gateways.inputs).toMatchObject({ minSize: 2, maxSize: 2, desiredCapacity: 2 });
    expect(hosts.inputs.targetGroupArns).toEqual([resource(run, 'aws:lb/targetGroup:TargetGroup', 'frontend-api-tg').state.arn]);
    expect(gateways.inputs.targetGroupArns).toEqual([resource(run, 'aws:lb/targetGroup:TargetGroup', 'frontend-gateway-tg').state.arn]);

    const redis = resource(run, REDIS, 'fleet-redis');
    const catalog = `rediss://${redis.state.primaryEndpointAddress as string}:6379/0`;
    // AUTH and TLS: the token is generated, kept secret, and the hosts get it in their (secret) user-data.
    expect(redis.inputs).toMatchObject({ transitEncryptionEnabled: true, atRestEncryptionEnabled: true });
    expect(redis.secretInputs).toContain('authToken');
    const token = resource(run, 'random:index/randomPassword:RandomPassword', 'fleet-redis-auth').state.result as string;
    expect(redis.inputs.authToken).toBe(token);
    expect(token).toMatch(/^[A-Za-z0-9.+]{16,128}$/);
    const config = loadStackConfig(FLEET);
    const nlb = resource(run, NLB, 'frontend-nlb');
    const common = {
      apiKey: apiKeyOf(run),
      formerApiKeys: formerKeysOf(run),
      bundle: bundleSource(run),
      proxyIngressIp: ingressOf(run),
      hostNetworks: [MOCK_VPC.cidrBlock],
      catalog,
      catalogPassword: token,
    };
    const hostLt = resource(run, LT, 'fleet-hosts-lt');
    const gatewayLt = resource(run, LT, 'fleet-gateways-lt');
    const decode = (lt: typeof hostLt) => Buffer.from(lt.inputs.userData as string, 'base64').toString();
    expect(decode(hostLt)).toBe(
      renderSandboxCloudInit(config, {
        role: 'fleet-host',
        ...common,
        templateInput: { serverIp: ingressOf(run), password: PASSWORD.value, stackFile: renderStackFile(config) },
        volumesFileSystem: resource(run, EFS, 'volumes-fs').state.dnsName as string,
      }),
    );
    expect(decode(gatewayLt)).toBe(
      renderSandboxCloudInit(config, { role: 'fleet-gateway', ...common, resumeUrl: `http://${nlb.state.dnsName}:3001` }),
    );
    expect(hostLt.secretInputs).toEqual(['userData']);
    expect(gatewayLt.secretInputs).toEqual(['userData']);
    // Every fleet host pins the template it builds at boot to the stack's proxy; the gateways run no sandboxes.
    expect(platformLine(decode(hostLt))).toContain(pinned(run, config.template.alias, config.proxy.port));
    expect(platformLine(decode(gatewayLt))).toBe('');
    expect((hostLt.inputs.networkInterfaces as Record<string, unknown>[])[0]).toMatchObject({
      ipv4PrefixCount: 1,
      associatePublicIpAddress: 'true',
    });
    expect(run.values.apiUrl).toBe(`http://${nlb.state.dnsName}:3001`);
    expect(run.values.sandboxUrl).toBe(`http://${nlb.state.dnsName}:3000`);
  });

  it('with a hosted zone, E2B_DOMAIN alone works: the gateways carry api.{domain} on 443 to the API behind the TLS listener', async () => {
    const run = await runProgram(
      { ...FLEET, dns: { zoneId: 'Z0123456789ABCDEFGHIJ' }, gateway: { domain: 'sandbox.example.com' } },
      PASSWORD,
    );
    const gatewayUnit = Buffer.from(resource(run, LT, 'fleet-gateways-lt').inputs.userData as string, 'base64').toString();
    const execStart = gatewayUnit.split('\n').find((l) => l.includes('ExecStart=') && l.includes(' gateway ')) ?? '';
    expect(execStart).toContain('--domain sandbox.example.com');
    expect(execStart).toContain('--api-upstream https://api.sandbox.example.com:3001');
    // api.{domain} names the load balancer, whose 443 is the gateways' and 3001 the hosts' API, both TLS with the
    // certificate that covers api.{domain} (the wildcard).
    const nlb = resource(run, NLB, 'frontend-nlb');
    const api = run.cloud.resources.find((r) => r.type === RECORD && r.inputs.name === 'api.sandbox.example.com');
    expect(api?.inputs.aliases).toEqual([{ name: nlb.state.dnsName, zoneId: nlb.state.zoneId, evaluateTargetHealth: true }]);
    const tg = (role: string) => resource(run, 'aws:lb/targetGroup:TargetGroup', `frontend-${role}-tg`).state.arn;
    const listeners = run.cloud.resources
      .filter((r) => r.type === LISTENER)
      .map((r) => ({
        port: r.inputs.port,
        protocol: r.inputs.protocol,
        to: (r.inputs.defaultActions as { targetGroupArn: string }[])[0].targetGroupArn,
      }));
    expect(listeners).toEqual(
      expect.arrayContaining([
        { port: 443, protocol: 'TLS', to: tg('gateway') },
        { port: 3001, protocol: 'TLS', to: tg('api') },
      ]),
    );
    expect(resource(run, 'aws:acm/certificate:Certificate', 'frontend-cert').inputs.subjectAlternativeNames).toEqual([
      '*.sandbox.example.com',
    ]);
    expect(run.values.apiUrl).toBe('https://api.sandbox.example.com:3001');
  });

  it("lets gateways reach the hosts, hosts each other's API, both reach Redis, and the VPC the load-balanced ports", async () => {
    const run = await runProgram(FLEET, PASSWORD);
    const id = (group: string) => resource(run, SG, `sandbox-${group}-sg`).id;
    const rules = sandboxIngress(run);
    expect(rules).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ group: id('host'), source: id('gateway'), from: 0, to: 65535 }),
        expect.objectContaining({ group: id('host'), source: id('host'), from: 3001, to: 3001 }),
        expect.objectContaining({ group: id('redis'), source: id('host'), from: 6379 }),
        expect.objectContaining({ group: id('redis'), source: id('gateway'), from: 6379 }),
        expect.objectContaining({ group: id('host'), cidr: MOCK_VPC.cidrBlock, from: 3001 }),
        expect.objectContaining({ group: id('gateway'), cidr: MOCK_VPC.cidrBlock, from: 3000 }),
        expect.objectContaining({ group: id('gateway'), cidr: '0.0.0.0/0', from: 3000 }),
      ]),
    );
    expect(rules.filter((r) => r.group === id('redis') && r.cidr !== undefined)).toEqual([]);
  });

  it('volumes: one encrypted EFS file system, a mount target in each subnet, NFS from the hosts only, mounted by every host', async () => {
    const run = await runProgram(FLEET, PASSWORD);
    const efs = resource(run, EFS, 'volumes-fs');
    expect(efs.inputs).toMatchObject({ encrypted: true });
    const targets = run.cloud.resources.filter((r) => r.type === MOUNT_TARGET);
    expect(targets.map((t) => t.inputs.subnetId).sort()).toEqual([...MOCK_SUBNETS].sort());
    const id = (group: string) => resource(run, SG, `sandbox-${group}-sg`).id;
    for (const t of targets) expect(t.inputs).toMatchObject({ fileSystemId: efs.id, securityGroups: [id('volumes')] });
    expect(sandboxIngress(run).filter((r) => r.group === id('volumes'))).toEqual([
      expect.objectContaining({ source: id('host'), from: 2049, to: 2049, cidr: undefined }),
    ]);
    const hostData = Buffer.from(resource(run, LT, 'fleet-hosts-lt').inputs.userData as string, 'base64').toString();
    const gatewayData = Buffer.from(resource(run, LT, 'fleet-gateways-lt').inputs.userData as string, 'base64').toString();
    expect(hostData).toContain(`${efs.state.dnsName as string}:/`);
    expect(hostData).toContain(`--volumes-dir ${SANDBOX_HOST_PATHS.volumes}`);
    expect(hostData).toContain(`RequiresMountsFor=${SANDBOX_HOST_PATHS.volumes}`);
    expect(hostData).toContain('nfs-common');
    expect(gatewayData).not.toContain('efs');
    // A single host keeps its volumes under its own data root: no file system is made.
    const single = await runProgram(BASE, PASSWORD);
    expect(single.cloud.resources.filter((r) => r.type === EFS)).toEqual([]);
  });

  it('an egress rotation leaves the launch templates alone; a password change rolls the hosts', async () => {
    const first = await runProgram({ ...FLEET, egress: { generation: 1 } }, PASSWORD);
    const rotated = await runProgram({ ...FLEET, egress: { generation: 2 } }, PASSWORD);
    const userData = (run: ProgramRun, name: string) => resource(run, LT, name).inputs.userData;
    expect(userData(rotated, 'fleet-hosts-lt')).toBe(userData(first, 'fleet-hosts-lt'));
    expect(userData(rotated, 'fleet-gateways-lt')).toBe(userData(first, 'fleet-gateways-lt'));
    const repassworded = await runProgram(FLEET, { value: 'another-password-of-enough-length', secret: true });
    expect(userData(repassworded, 'fleet-hosts-lt')).not.toBe(userData(first, 'fleet-hosts-lt'));
    expect(resource(first, ASG, 'fleet-hosts').inputs.instanceRefresh).toMatchObject({ strategy: 'Rolling' });
  });
});
