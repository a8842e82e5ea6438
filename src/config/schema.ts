import { z } from 'zod';
import { cidrList, flag, integer, ipv4, port } from './fields';
import { AEAD_METHODS, SS_MODES } from './methods';

/**
 * The whole stack configuration: the `sandbox-kit:` namespace of Pulumi.<stack>.yaml, one object per key.
 * Defaults are the spec's values. The proxy password is not here: it is a secret, read separately
 * (`sandbox-kit:proxyPassword`, or SANDBOX_KIT_PROXY_PASSWORD for the CLI), so it never travels with plain config.
 */

const proxy = z
  .strictObject({
    /** Address ss-server listens on (`server`). */
    listenAddress: ipv4().default('0.0.0.0'),
    /** `server_port`; the firewall opens it for TCP and UDP. */
    port: port().default(8388),
    method: z.enum(AEAD_METHODS).default('aes-256-gcm'),
    mode: z.enum(SS_MODES).default('tcp_and_udp'),
    /** Idle timeout in seconds. */
    timeout: integer(1, 86400, 'a timeout in seconds, an integer from 1 to 86400').default(300),
    fastOpen: flag().default(true),
    /** Destinations the proxy refuses on top of loopback, RFC 1918, link-local and the other private ranges. */
    blockedCidrs: cidrList().default([]),
  })
  .prefault({});

/** `tcp` is what the spec writes for the client; libev's name for it is `tcp_only`. */
const clientMode = z
  .enum(['tcp', ...SS_MODES], { message: `expected one of tcp (alias of tcp_only), ${SS_MODES.join(', ')}` })
  .transform((m) => (m === 'tcp' ? 'tcp_only' : m));

const client = z
  .strictObject({
    /** SOCKS5 listen address inside the sandbox (`local_address`). */
    localAddress: ipv4().default('0.0.0.0'),
    /** SOCKS5 port inside the sandbox (`local_port`). */
    localPort: port().default(1080),
    /** ss-redir port inside the sandbox, transparent mode. */
    redirectPort: port().default(12345),
    mode: clientMode.default('tcp_only'),
    /** Extra destinations the NAT chain returns (never redirects), on top of the spec's four. */
    bypassCidrs: cidrList().default([]),
  })
  .prefault({});

const host = z
  .strictObject({
    instanceType: z.string().regex(/^[a-z0-9]+\.[a-z0-9]+$/, { message: 'expected an EC2 instance type such as t3.micro' }).default('t3.micro'),
    /** OpenSSH public key installed for the SSH user; without it the host has no key pair. */
    sshPublicKey: z
      .string()
      .regex(/^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)) [A-Za-z0-9+/=]+( .*)?$/, {
        message: 'expected an OpenSSH public key line (ssh-ed25519 AAAA... comment)',
      })
      .optional(),
    /** Who may reach SSH (22/tcp). Empty: no SSH rule at all. */
    adminCidrs: cidrList().default([]),
    /** Who may reach the proxy port (TCP and UDP). */
    clientCidrs: cidrList().min(1, { message: 'expected at least one CIDR (0.0.0.0/0 for anyone)' }).default(['0.0.0.0/0']),
    /** Login user of the Debian cloud image. */
    sshUser: z.string().regex(/^[a-z_][a-z0-9_-]*$/, { message: 'expected a Unix user name' }).default('admin'),
    /** Subnet for the host; default: a default-for-AZ subnet of the region's default VPC. */
    subnetId: z.string().regex(/^subnet-[0-9a-f]{8,17}$/, { message: 'expected a subnet id such as subnet-0123456789abcdef0' }).optional(),
    /** Pins the image; default: the newest official Debian 12 image, looked up once (later releases do not replace the host). */
    amiId: z.string().regex(/^ami-[0-9a-f]{8,17}$/, { message: 'expected an AMI id such as ami-0123456789abcdef0' }).optional(),
    /** CPU architecture of the Debian image; must match the instance type (arm64 for t4g, c7g, ...). */
    architecture: z.enum(['amd64', 'arm64']).default('amd64'),
    /** Bump to recreate the host with a new ingress address (clients and the template must then be rebuilt). */
    generation: integer(0, 1_000_000, 'an integer from 0 to 1000000').default(1),
  })
  .prefault({});

const egress = z
  .strictObject({
    /** dedicated: a second address just for outbound traffic (rotatable); shared: ingress = egress, as in the spec. */
    mode: z.enum(['dedicated', 'shared']).default('dedicated'),
    /** Bump to rotate the egress address; nothing else changes. */
    generation: integer(0, 1_000_000, 'an integer from 0 to 1000000').default(1),
  })
  .prefault({});

const template = z
  .strictObject({
    alias: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, { message: 'expected lower-case letters, digits, - and _, at most 63 characters' })
      .default('sandbox-kit-proxy'),
    /** Which client mode the template starts: local (SOCKS5 on localPort) or transparent (all TCP). */
    mode: z.enum(['local', 'transparent']).default('local'),
    memoryMB: integer(128, 65536, 'memory in MB, an integer from 128 to 65536').default(1024),
    cpuCount: integer(1, 64, 'an integer from 1 to 64').default(1),
  })
  .prefault({});

const agent = z
  .strictObject({
    port: port().default(49983),
    defaultUser: z.string().regex(/^[a-z_][a-z0-9_-]*$/, { message: 'expected a Unix user name' }).default('user'),
  })
  .prefault({});

const gateway = z
  .strictObject({
    port: port().default(3000),
    /** Sandbox API host is `sandbox.{domain}`; per-port hosts are `{port}-{sandboxID}.{domain}`. */
    domain: z
      .string()
      .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/, { message: 'expected a DNS domain such as sandbox.example.com' })
      .default('localhost'),
  })
  .prefault({});

export const stackConfigSchema = z.strictObject({
  proxy,
  client,
  host,
  egress,
  template,
  agent,
  gateway,
  /** Header and xattr brand: `Svc` gives Svc-Sandbox-Id and user.svc.*; `E2b` speaks to the E2B SDK. */
  brand: z
    .string()
    .regex(/^[A-Z][A-Za-z0-9]{0,31}$/, { message: 'expected a capitalised word of letters and digits, such as Svc' })
    .default('Svc'),
});

/** The keys of the `sandbox-kit:` namespace that are secrets, never part of the plain config object. */
export const SECRET_KEYS = ['proxyPassword'] as const;

export type StackConfigInput = z.input<typeof stackConfigSchema>;
export type StackConfig = z.output<typeof stackConfigSchema>;
