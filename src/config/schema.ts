import { z } from 'zod';
import { cidrList, flag, integer, ipv4, oneOf, openCidrList, port, registryList, sshCidrList, text, warmPoolSizes } from './fields';
import { AEAD_METHODS, CLIENT_MODES, SS_MODES } from './methods';
import { DEFAULT_AGENT_PORT } from '../contract/agent-port';
import { DEFAULT_RUNSC_PLATFORM, RUNSC_PLATFORMS, RUNTIME_CHOICES } from '../contract/runtime-choice';
import { limits } from './limits';

/**
 * The whole stack configuration: the `sandbox-kit:` namespace of Pulumi.<stack>.yaml, one object per key.
 * Defaults are the values of the proxy setup docs/design.md#proxy-host describes. The proxy password is not here: it
 * is a secret, read separately (`sandbox-kit:proxyPassword`, or SANDBOX_KIT_PROXY_PASSWORD for the CLI), so it never
 * travels with plain config.
 */

const proxy = z
  .strictObject({
    listenAddress: ipv4().default('0.0.0.0').describe('Address ss-server listens on (`server`).'),
    port: port().default(8388).describe('`server_port`; the firewall opens it for TCP and UDP.'),
    method: oneOf(AEAD_METHODS).default('aes-256-gcm').describe('Cipher; only the AEAD ciphers of shadowsocks-libev are accepted.'),
    mode: oneOf(SS_MODES).default('tcp_and_udp').describe('Transports ss-server relays (`mode`).'),
    timeout: integer(1, 86400, 'a timeout in seconds, an integer from 1 to 86400').default(300).describe('Idle timeout in seconds.'),
    fastOpen: flag().default(true).describe('TCP Fast Open (`fast_open`); also sets net.ipv4.tcp_fastopen=3 on the host.'),
    blockedCidrs: cidrList()
      .default([])
      .describe('Destinations the proxy refuses on top of loopback, RFC 1918, link-local and the other private ranges.'),
  })
  .prefault({});

/** `tcp` is what common client configs write; libev's name for it is `tcp_only` (docs/design.md#proxy). */
const clientMode = oneOf(['tcp', ...SS_MODES], `one of ${SS_MODES.join(', ')}, or tcp (alias of tcp_only)`).transform((m) =>
  m === 'tcp' ? 'tcp_only' : m,
);

const client = z
  .strictObject({
    localAddress: ipv4().default('0.0.0.0').describe('SOCKS5 listen address inside the sandbox (`local_address`).'),
    localPort: port().default(1080).describe('SOCKS5 port inside the sandbox (`local_port`).'),
    redirectPort: port().default(12345).describe('ss-redir port inside the sandbox, transparent mode.'),
    mode: clientMode.default('tcp_only').describe('Transports the sandbox client relays (`mode`); `tcp` is rendered `tcp_only`.'),
    bypassCidrs: cidrList()
      .default([])
      .describe(
        'Extra destinations the NAT chain returns (never redirects), on top of the proxy, 0.0.0.0/8, 127.0.0.0/8 and 169.254.0.0/16.',
      ),
  })
  .prefault({});

const host = z
  .strictObject({
    instanceType: text(/^[a-z0-9]+\.[a-z0-9]+$/, 'an EC2 instance type such as t3.micro')
      .default('t3.micro')
      .describe('EC2 instance type of the proxy host.'),
    sshPublicKey: text(
      /^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)) [A-Za-z0-9+/=]+( .*)?$/,
      'an OpenSSH public key line (ssh-ed25519 AAAA... comment)',
    )
      .optional()
      .describe('OpenSSH public key installed for the SSH user; without it the host has no key pair.'),
    adminCidrs: sshCidrList()
      .default([])
      .describe(
        'Who may reach SSH (22/tcp) on the proxy host and the sandbox hosts. Empty: no SSH rule at all (and no template build, which runs over SSH).',
      ),
    clientCidrs: openCidrList().default(['0.0.0.0/0']).describe('Who may reach the proxy port (TCP and UDP).'),
    sshUser: text(/^[a-z_][a-z0-9_-]*$/, 'a Unix user name')
      .default('admin')
      .describe('Login user of the Debian cloud image.'),
    subnetId: text(/^subnet-[0-9a-f]{8,17}$/, 'a subnet id such as subnet-0123456789abcdef0')
      .optional()
      .describe("Subnet for the host; default: a default-for-AZ subnet of the region's default VPC."),
    amiId: text(/^ami-[0-9a-f]{8,17}$/, 'an AMI id such as ami-0123456789abcdef0')
      .optional()
      .describe('Pins the image; default: the newest official Debian 12 image, looked up once (later releases do not replace the host).'),
    architecture: oneOf(['amd64', 'arm64'])
      .default('amd64')
      .describe('CPU architecture of the Debian image; must match the instance type (arm64 for t4g, c7g, ...).'),
    generation: integer(0, 1_000_000, 'an integer from 0 to 1000000')
      .default(1)
      .describe('Bump to recreate the host with a new ingress address (clients and the template must then be rebuilt).'),
  })
  .prefault({});

const egress = z
  .strictObject({
    mode: oneOf(['dedicated', 'shared'])
      .default('dedicated')
      .describe('dedicated: a second address just for outbound traffic (rotatable); shared: ingress = egress, one address for both.'),
    generation: integer(0, 1_000_000, 'an integer from 0 to 1000000')
      .default(1)
      .describe('Bump to rotate the egress address; nothing else changes.'),
  })
  .prefault({});

const template = z
  .strictObject({
    alias: text(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'lower-case letters, digits, - and _, at most 63 characters')
      .default('sandbox-kit-proxy')
      .describe('Template name (`alias`) sandboxes are created from.'),
    mode: oneOf(CLIENT_MODES)
      .default('local')
      .describe('Which client mode the template starts: local (SOCKS5 on localPort) or transparent (all TCP).'),
    memoryMB: integer(128, 65536, 'memory in MB, an integer from 128 to 65536')
      .default(1024)
      .describe('Template build memory (`memoryMB`).'),
    cpuCount: integer(1, 64, 'an integer from 1 to 64').default(1).describe('Template build CPUs (`cpuCount`).'),
  })
  .prefault({});

/**
 * Limits of template builds on a platform host (docs/security.md, Limits): `sandbox-kit platform` takes them as flags
 * (`--build-deadline-seconds`, ...), rendered from these keys; `up` passes them to its platform.
 */
export const buildLimitFields = {
  deadlineSeconds: integer(60, 86400, 'a time in seconds, an integer from 60 to 86400')
    .default(3600)
    .describe(
      "Deadline of a whole template build from its start (a queued build's wait does not count): the running step is killed and the build fails naming this limit. Each step also has the builder's `stepTimeoutMs`.",
    ),
  logLineBytes: integer(256, 1_048_576, 'a size in bytes, an integer from 256 to 1048576')
    .default(16_384)
    .describe(
      'Longest build log line kept: a longer line is cut there and ends with a marker saying how many bytes were cut; the build goes on.',
    ),
  logBytes: integer(65_536, 1_073_741_824, 'a size in bytes, an integer from 65536 to 1073741824')
    .default(8_388_608)
    .describe(
      "Log volume kept per build (the steps' output): past it one marker line says the rest is not kept, and the build goes on; the failure reason still carries the failing step's last lines.",
    ),
  stepDiskMB: integer(64, 1_048_576, 'a size in MB, an integer from 64 to 1048576')
    .default(10_240)
    .describe(
      "Disk of each template build step (a sparse file of this size per running step, on the platform's data root): a step writing past it gets ENOSPC and the build fails naming this key.",
    ),
  concurrent: integer(1, 64, 'an integer from 1 to 64')
    .default(2)
    .describe(
      "Template builds running at once on a platform host. More wait, queued in order with status `waiting` and a log line saying so (as E2B's queued builds do); each team's own `builds` quota still answers 429.",
    ),
};

export const buildLimitsSchema = z.strictObject(buildLimitFields).prefault({});

/** The build limits when a stack sets none: the schema's defaults. */
export function defaultBuildLimits(): BuildLimits {
  return buildLimitsSchema.parse({});
}

export type BuildLimits = z.output<typeof buildLimitsSchema>;

/**
 * The storage collector of a platform host (docs/templates.md#storage): `sandbox-kit platform` takes these as flags
 * (`--gc-interval-seconds`, `--gc-keep-unused-seconds`), rendered from these keys; `up` passes them to its platform.
 */
export const gcFields = {
  intervalSeconds: integer(0, 604_800, 'a time in seconds, an integer from 0 (never on its own) to 604800')
    .default(3600)
    .describe(
      'How often the platform removes the layers, uploads and pulled images that nothing uses any more (no template tag or ready build, no running or paused sandbox, no snapshot, no build under way); 0 runs it only when asked (`sandbox-kit gc`, `POST /admin/gc`).',
    ),
  keepUnusedSeconds: integer(0, 2_592_000, 'a time in seconds, an integer from 0 to 2592000')
    .default(86_400)
    .describe(
      "How long an unused layer, upload or pulled image is kept after it last changed (or, for an upload, was last offered to the SDK as present): an upload no build used expires after it, and a failed build's layers stay in the cache that long for a retry.",
    ),
};

export const gcSchema = z.strictObject(gcFields).prefault({});

export type GcSettings = z.output<typeof gcSchema>;

/** The collector's settings when a stack sets none: the schema's defaults. */
export function defaultGcSettings(): GcSettings {
  return gcSchema.parse({});
}

/** Where template base images come from (docs/templates.md#images). */
const images = z
  .strictObject({
    insecureRegistries: registryList()
      .default([])
      .describe(
        "Registries the template builder may reach over plain HTTP (or HTTPS with a certificate the host does not trust), besides loopback ones, which always may. Every other registry is HTTPS checked against the host's trust store.",
      ),
    e2bBase: oneOf(['kit', 'registry'])
      .default('kit')
      .describe(
        "What `fromBaseImage()` (`e2bdev/base`) builds from: `kit`, the kit's own `base` template (Debian, made offline); `registry`, E2B's image pulled from Docker Hub.",
      ),
  })
  .prefault({});

const agent = z
  .strictObject({
    port: port()
      .default(DEFAULT_AGENT_PORT)
      .describe('Port the in-sandbox agent listens on (the default of the `Svc-Sandbox-Port` header).'),
    defaultUser: text(/^[a-z_][a-z0-9_-]*$/, 'a Unix user name')
      .default('user')
      .describe('Sandbox user when a request names none (Basic auth).'),
  })
  .prefault({});

const gateway = z
  .strictObject({
    port: port().default(3000).describe('Port the shared sandbox gateway listens on.'),
    domain: text(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/, 'a DNS domain such as sandbox.example.com')
      .default('localhost')
      .describe('Sandbox API host is `sandbox.{domain}`; per-port hosts are `{port}-{sandboxID}.{domain}`.'),
  })
  .prefault({});

const INSTANCE_TYPE = 'an EC2 instance type such as t3.large';
const instanceType = () => text(/^[a-z0-9-]+\.[a-z0-9]+$/, INSTANCE_TYPE);

const sandboxHost = z
  .strictObject({
    instanceType: instanceType()
      .default('t3.large')
      .describe('EC2 instance type of each sandbox host (platform, runtime, gateway); sandboxes share its memory and CPUs.'),
    diskGb: integer(20, 16384, 'a disk size in GiB, an integer from 20 to 16384')
      .default(40)
      .describe('Root volume (gp3, encrypted) of each sandbox host: templates, layers and sandbox writes live here.'),
    apiPort: port()
      .default(3001)
      .describe('Port of the platform API (`E2B_API_URL`); with a domain, the TLS listener of the load balancer uses the same port.'),
    apiCidrs: openCidrList().default(['0.0.0.0/0']).describe('Who may reach the platform API (every request still needs the API key).'),
    gatewayCidrs: openCidrList()
      .default(['0.0.0.0/0'])
      .describe("Who may reach the sandbox gateway (`E2B_SANDBOX_URL`; every request still needs the sandbox's access token)."),
    dataVolumeGb: integer(10, 16384, 'a disk size in GiB, an integer from 10 to 16384')
      .default(100)
      .describe(
        "A second volume (gp3, encrypted, XFS) of each sandbox host holding the platform's state: sandbox disks, template layers, uploads. A full one never fills the host's root volume.",
      ),
    generation: integer(0, 1_000_000, 'an integer from 0 to 1000000')
      .default(1)
      .describe('Bump to recreate the sandbox host(s): sandboxes are lost, the template is rebuilt.'),
    runtime: oneOf(RUNTIME_CHOICES, 'crun, runc, runsc or auto')
      .default('auto')
      .describe(
        "OCI runtime of the sandboxes: crun or runc share the host's kernel; runsc (gVisor) gives each sandbox a kernel of its own in user space (docs/runtime.md#runsc; template build steps run on it too); auto takes crun, or runc where crun is missing.",
      ),
    runscPlatform: oneOf(RUNSC_PLATFORMS)
      .default(DEFAULT_RUNSC_PLATFORM)
      .describe(
        "How gVisor intercepts the sandbox's system calls when runtime is runsc: systrap (no /dev/kvm needed), ptrace (slowest, works everywhere), kvm (hosts with a usable /dev/kvm: bare metal, not a nested VM).",
      ),
    warmPool: warmPoolSizes()
      .default({})
      .describe(
        "The warm pool (docs/platform.md#warm-pool): sandboxes of these templates each host keeps started and networked, waiting for a create to take one (a create then skips the container's and the agent's start). They hold host memory and CPU (the host's admission counts them) but no team's quota; a create the host's admission would refuse removes pooled sandboxes first, and a create the pool cannot serve starts cold. A name `TEAM/TEMPLATE` (a team's name or ID) pools that team's private template. `sandbox-kit platform --warm-pool TEMPLATE=N`.",
      ),
  })
  .prefault({});

const fleet = z
  .strictObject({
    hosts: integer(1, 100, 'an integer from 1 to 100')
      .default(1)
      .describe(
        'Sandbox hosts. 1: a single host running everything (the default). More: an Auto Scaling group of hosts behind a load balancer, sharing a Redis catalog.',
      ),
    gateways: integer(1, 20, 'an integer from 1 to 20').default(2).describe('Gateway instances behind the load balancer when hosts > 1.'),
    gatewayInstanceType: instanceType().default('t3.small').describe('EC2 instance type of each fleet gateway.'),
    redisNodeType: text(/^cache\.[a-z0-9]+\.[a-z0-9]+$/, 'an ElastiCache node type such as cache.t4g.micro')
      .default('cache.t4g.micro')
      .describe("ElastiCache node type of the fleet's shared catalog and host registry (each host keeps its own platform state)."),
    prefixesPerHost: integer(1, 16, 'an integer from 1 to 16')
      .default(1)
      .describe(
        "IPv4 /28 prefixes delegated to each fleet host's network interface: its sandboxes' addresses, routable in the VPC so any gateway reaches any sandbox (the platform allocates from the first).",
      ),
  })
  .prefault({});

const dns = z
  .strictObject({
    zoneId: text(/^Z[A-Z0-9]{1,31}$/, 'a Route 53 hosted zone id such as Z0123456789ABCDEFGHIJ')
      .optional()
      .describe(
        'Hosted zone of `gateway.domain`. When set: api.{domain}, sandbox.{domain} and *.{domain} records, an ACM certificate, and TLS on a load balancer.',
      ),
  })
  .prefault({});

export const stackConfigSchema = z
  .strictObject({
    proxy,
    client,
    host,
    egress,
    template,
    images,
    agent,
    gateway,
    sandboxHost,
    fleet,
    dns,
    builds: buildLimitsSchema,
    gc: gcSchema,
    limits,
    brand: text(/^[A-Z][A-Za-z0-9]{0,31}$/, 'a capitalised word of letters and digits, such as Svc')
      .default('Svc')
      .describe('Header and xattr brand: `Svc` gives Svc-Sandbox-Id and user.svc.*; `E2b` speaks to the E2B SDK.'),
  })
  .superRefine((config, ctx) => {
    // A hosted zone serves one real domain; the default `localhost` has no public records.
    if (config.dns.zoneId !== undefined && config.gateway.domain === 'localhost') {
      ctx.addIssue({
        code: 'custom',
        path: ['gateway', 'domain'],
        input: config.gateway.domain,
        message: 'expected the domain of dns.zoneId (a public DNS domain, not the default localhost) when dns.zoneId is set',
      });
    }
  });

/**
 * Keys that are validated and documented but that nothing reads yet. The generated reference marks them as such, so
 * it never promises an effect the kit does not have; the change that makes something read a key removes it here and
 * regenerates the reference (`npm run docs:config`). Empty since `sandbox-kit template build` reads template.alias,
 * template.memoryMB and template.cpuCount.
 */
export const NOT_YET_READ_KEYS: readonly string[] = [];

/** The keys of the `sandbox-kit:` namespace that are secrets, never part of the plain config object. */
export const SECRET_KEYS = ['proxyPassword', 'sshPrivateKey'] as const;

/** What each secret is, for the config reference. */
export const SECRET_DESCRIPTIONS: Record<(typeof SECRET_KEYS)[number], string> = {
  proxyPassword: 'the Shadowsocks password, at least 16 printable ASCII characters without spaces. Unset: the program generates one.',
  sshPrivateKey:
    'the OpenSSH private key matching `host.sshPublicKey` (`pulumi config set --secret sandbox-kit:sshPrivateKey < ~/.ssh/id_ed25519`). The program logs in with it to build the proxy template on the sandbox host; unset: the template is not built by `pulumi up`.',
};

export type StackConfigInput = z.input<typeof stackConfigSchema>;
export type StackConfig = z.output<typeof stackConfigSchema>;
