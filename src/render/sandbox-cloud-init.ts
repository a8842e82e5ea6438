import { renderDataVolumeScript } from './data-volume';
import { stringify } from 'yaml';
import type { StackConfig } from '../config';
import { NODESOURCE_KEY, NODESOURCE_REPOSITORY } from './nodesource-key';
import { renderSandboxNetworkScript, type SandboxNetworkOptions } from './sandbox-network';
import { LOCAL_REDIS_CATALOG, LOCAL_REDIS_STATE, SANDBOX_HOST_PATHS as P, SANDBOX_UNITS } from './sandbox-host-paths';
import { STANDALONE_RANGE } from '../runtime/network/host-network';
import { renderCliWrapper, renderGatewayUnit, renderNetworkUnit, renderPlatformUnit, renderRedisAuthScript } from './service-units';
import { renderBuildTemplateScript, type TemplateBuildInput } from './template-build';

/**
 * Which machine of the sandbox side a user-data is for. `single`: one host running everything (platform, runtime,
 * gateway, the Redis catalog on loopback). `fleet-host`: platform and runtime, catalog in ElastiCache, sandbox
 * addresses from delegated prefixes. `fleet-gateway`: the gateway alone.
 */
export type SandboxRole = 'single' | 'fleet-host' | 'fleet-gateway';

/** The release bundle: an S3 object (a zip of dist/bundle) and the sha256 of every file in it. */
export interface BundleSource {
  bucket: string;
  key: string;
  region: string;
  /** File name -> sha256 (hex). */
  sums: Readonly<Record<string, string>>;
}

export interface SandboxHostInputs {
  role: SandboxRole;
  /** The platform API key (secret): written 0600, never in a unit or a command line. */
  apiKey: string;
  /** Keys handed out before (still accepted): written below the key, one per line. */
  formerApiKeys?: readonly string[];
  bundle: BundleSource;
  /** The proxy's ingress address: the only private-to-public exception sandboxes need. */
  proxyIngressIp: string;
  /** The VPC's blocks: sandboxes may not open connections to them. */
  hostNetworks: readonly string[];
  /** Fleet: the shared catalog (ElastiCache with TLS), `rediss://HOST:PORT/DB`. */
  catalog?: string;
  /** Fleet: the shared Redis's auth token (secret): written 0600, never in a unit or a command line. */
  catalogPassword?: string;
  /** Fleet gateway: the platform API it resumes sandboxes through. */
  resumeUrl?: string;
  /**
   * Fleet host: what the template build needs, so every host (also one the Auto Scaling group adds later) builds the
   * proxy template into its own layers at boot. Holds the password: written 0600. A single host gets it from
   * `pulumi up` over SSH instead, so a password change rebuilds the template without replacing the host.
   */
  templateInput?: TemplateBuildInput;
  /**
   * Fleet host: the DNS name of the fleet's volumes file system (Amazon EFS), mounted over NFS 4.1 at P.volumes
   * before the platform starts, so a sandbox on any host mounts any volume.
   */
  volumesFileSystem?: string;
}

/** How a fleet host mounts the volumes file system: NFS 4.1 as Amazon EFS documents it, waiting for the network. */
export const EFS_MOUNT_OPTIONS = 'nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport,_netdev';

/** Where a fleet host keeps the input it builds its template from at boot (0600). */
export const BOOT_TEMPLATE_INPUT = `${P.etc}/template-input.json`;

export interface HostFile {
  path: string;
  permissions: string;
  owner: string;
  content: string;
}

/** Debian packages per role (besides nodejs from the Node.js repository). */
export function sandboxPackages(role: SandboxRole): string[] {
  const fetch = ['awscli', 'unzip', 'curl'];
  if (role === 'fleet-gateway') return ['nodejs', ...fetch];
  // e2fsprogs: each sandbox's disk; xfsprogs: the data volume; conntrack: the egress relay's original destinations
  // where the kernel has no /proc/net/nf_conntrack; nftables: the sandbox guard's L2 rules (guard-rules.ts).
  const runtime = [
    'crun',
    'runc',
    'tini',
    'mmdebstrap',
    'iptables',
    'nftables',
    'conntrack',
    'iproute2',
    'attr',
    'uidmap',
    'e2fsprogs',
    'xfsprogs',
  ];
  // Template base images from registries; ECR's credential helper trades the host's instance role for a pull token.
  const images = ['skopeo', 'umoci', 'amazon-ecr-credential-helper'];
  // redis-server: the platform's own state, on loopback (the single host's catalog too).
  return ['nodejs', ...fetch, ...runtime, ...images, 'redis-server'];
}

function sumsFile(sums: Readonly<Record<string, string>>): string {
  const names = Object.keys(sums).sort();
  for (const name of names) {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name))
      throw new Error(`bundle file name ${JSON.stringify(name)}: expected letters, digits, '.', '-', '_'`);
    if (!/^[0-9a-f]{64}$/.test(sums[name]!))
      throw new Error(`bundle file ${name}: expected a sha256 in hex, got ${JSON.stringify(sums[name])}`);
  }
  return names.map((n) => `${sums[n]}  ${n}\n`).join('');
}

/** Fetches the bundle with the instance role, checks every file against the sums, swaps it into place. */
export function renderInstallBundleScript(bundle: BundleSource): string {
  return `#!/bin/sh
# Installs the sandbox-kit release bundle from S3 (instance role) into ${P.lib}, after checking every file.
set -eu

BUCKET=${bundle.bucket}
KEY=${bundle.key}
REGION=${bundle.region}
LIB=${P.lib}
SUMS=${P.bundleSums}

mkdir -p ${P.root}
work=$(mktemp -d ${P.root}/.install.XXXXXX)
trap 'rm -rf "$work"' EXIT
tries=0
until aws s3 cp --only-show-errors --region "$REGION" "s3://$BUCKET/$KEY" "$work/bundle.zip"; do
  tries=$((tries + 1))
  if [ "$tries" -ge 10 ]; then
    echo "install-bundle: cannot fetch s3://$BUCKET/$KEY" >&2
    exit 1
  fi
  sleep 6
done
mkdir "$work/lib"
unzip -q "$work/bundle.zip" -d "$work/lib"
(cd "$work/lib" && sha256sum --check --strict --quiet "$SUMS")
chmod -R a+rX,go-w "$work/lib"
rm -rf "$LIB.old"
if [ -d "$LIB" ]; then mv "$LIB" "$LIB.old"; fi
mv "$work/lib" "$LIB"
rm -rf "$LIB.old"
echo "install-bundle: installed $(wc -l < "$SUMS") files into $LIB"
`;
}

function networkOptions(config: StackConfig, inputs: SandboxHostInputs): SandboxNetworkOptions {
  const mode = config.proxy.mode;
  return {
    // A single host's platform picks a /24 of the runtime's standalone range; a fleet host's sandboxes take the
    // prefix delegated to its interface, which the VPC routes to it (the gateways on other machines reach them).
    addresses: inputs.role === 'fleet-host' ? { kind: 'delegated' } : { kind: 'static', cidr: STANDALONE_RANGE },
    proxy: {
      ip: inputs.proxyIngressIp,
      port: config.proxy.port,
      protocols: mode === 'tcp_only' ? ['tcp'] : mode === 'udp_only' ? ['udp'] : ['tcp', 'udp'],
    },
    hostNetworks: inputs.hostNetworks,
    routedFrom: inputs.role === 'fleet-host' ? inputs.hostNetworks : [],
  };
}

/** The file with the catalog's password: the host's own Redis's on a single host, the fleet's auth token otherwise. */
function catalogPasswordFile(inputs: SandboxHostInputs): string {
  if (inputs.role === 'single') return P.redisPassword;
  if (!inputs.catalogPassword) throw new Error(`a ${inputs.role} needs the fleet's Redis auth token`);
  return P.catalogPassword;
}

function catalogOf(inputs: SandboxHostInputs): string {
  if (inputs.role === 'single') return LOCAL_REDIS_CATALOG;
  if (!inputs.catalog) throw new Error(`a ${inputs.role} needs the fleet's catalog (redis://HOST:PORT/DB)`);
  return inputs.catalog;
}

/**
 * Every file a sandbox-side machine gets, with its mode: the single list cloud-init writes and the lab lays out.
 * Secrets (the API key) are 0600; scripts 0755; units, sums and the wrapper as systemd and a shell expect them.
 */
export function sandboxHostFiles(config: StackConfig, inputs: SandboxHostInputs): HostFile[] {
  const file = (path: string, permissions: string, content: string): HostFile => ({ path, permissions, owner: 'root:root', content });
  const catalog = catalogOf(inputs);
  const passwordFile = catalogPasswordFile(inputs);
  const files: HostFile[] = [
    file(P.apiKey, '0600', `${[inputs.apiKey, ...(inputs.formerApiKeys ?? [])].join('\n')}\n`),
    file(P.bundleSums, '0644', sumsFile(inputs.bundle.sums)),
    file(P.installBundle, '0755', renderInstallBundleScript(inputs.bundle)),
    file(P.wrapper, '0755', renderCliWrapper()),
    file(P.rootMarker, '0644', `${JSON.stringify({ name: 'sandbox-kit-release', private: true })}\n`),
  ];
  if (inputs.role !== 'single') files.push(file(P.catalogPassword, '0600', `${inputs.catalogPassword}\n`));
  if (inputs.role !== 'fleet-gateway') {
    files.push(
      file(P.redisAuth, '0755', renderRedisAuthScript()),
      file(P.dataVolumeScript, '0755', renderDataVolumeScript()),
      file(P.networkScript, '0755', renderSandboxNetworkScript(networkOptions(config, inputs))),
      file(`${P.units}/${SANDBOX_UNITS.network}`, '0644', renderNetworkUnit()),
      file(
        `${P.units}/${SANDBOX_UNITS.platform}`,
        '0644',
        // The platform's state (sandbox records, templates) belongs to this host, whose containers and layers it
        // describes: it stays in the host's own Redis. Only the catalog is the fleet's.
        renderPlatformUnit(config, {
          catalog,
          catalogPasswordFile: passwordFile,
          state: LOCAL_REDIS_STATE,
          localRedis: true,
          proxyIngressIp: inputs.proxyIngressIp,
          fleet: inputs.role === 'fleet-host',
          ...(inputs.role === 'fleet-host' && inputs.volumesFileSystem ? { volumesDir: P.volumes } : {}),
        }),
      ),
      file(P.buildTemplate, '0755', renderBuildTemplateScript(config)),
    );
  }
  if (inputs.role === 'fleet-host' && inputs.templateInput) {
    files.push(file(BOOT_TEMPLATE_INPUT, '0600', `${JSON.stringify(inputs.templateInput)}\n`));
  }
  if (inputs.role !== 'fleet-host') {
    const resumeUrl = inputs.role === 'single' ? `http://127.0.0.1:${config.sandboxHost.apiPort}` : inputs.resumeUrl;
    if (!resumeUrl) throw new Error('a fleet-gateway needs the platform API URL it resumes sandboxes through');
    const after = inputs.role === 'single' ? [SANDBOX_UNITS.redis, SANDBOX_UNITS.platform] : [];
    // The gateway carries `api.{domain}` to the platform, so E2B_DOMAIN alone works: a single host's is beside it, a
    // fleet's gateways reach it as they resume sandboxes, through the load balancer (its TLS listener with a domain).
    const apiUpstream = inputs.role === 'single' ? `127.0.0.1:${config.sandboxHost.apiPort}` : resumeUrl;
    files.push(
      file(
        `${P.units}/${SANDBOX_UNITS.gateway}`,
        '0644',
        renderGatewayUnit(config, {
          catalog,
          catalogPasswordFile: passwordFile,
          resumeUrl,
          after,
          ...(apiUpstream ? { apiUpstream } : {}),
        }),
      ),
    );
  }
  return files;
}

/** The units a role enables, in start order. */
export function sandboxUnits(role: SandboxRole): string[] {
  if (role === 'fleet-gateway') return [SANDBOX_UNITS.gateway];
  if (role === 'fleet-host') return [SANDBOX_UNITS.redis, SANDBOX_UNITS.network, SANDBOX_UNITS.platform];
  return [SANDBOX_UNITS.redis, SANDBOX_UNITS.network, SANDBOX_UNITS.platform, SANDBOX_UNITS.gateway];
}

/**
 * cloud-init user-data of a sandbox-side Debian 12 machine: the Node.js 20 repository (its key pinned), the
 * packages, the files, the bundle fetched and checked, then the services. The bundle itself is too large for
 * user-data (16 KiB), so it comes from S3 (see docs/deploy-aws.md).
 */
export function renderSandboxCloudInit(config: StackConfig, inputs: SandboxHostInputs): string {
  const volumes = inputs.role === 'fleet-host' ? inputs.volumesFileSystem : undefined;
  if (volumes !== undefined && !/^[a-z0-9.-]+$/.test(volumes))
    throw new Error(`volumesFileSystem ${JSON.stringify(volumes)}: expected a DNS name such as fs-0123.efs.eu-west-1.amazonaws.com`);
  const doc = {
    apt: {
      sources: {
        'nodesource.list': { source: `deb [signed-by=$KEY_FILE] ${NODESOURCE_REPOSITORY} nodistro main`, key: NODESOURCE_KEY },
        // cloud-init's $MIRROR: the image's own Debian mirror.
        ...(inputs.role !== 'fleet-gateway' && config.sandboxHost.runtime === 'runsc'
          ? { 'bookworm-backports.list': { source: 'deb $MIRROR bookworm-backports main' } }
          : {}),
      },
    },
    package_update: true,
    packages: [...sandboxPackages(inputs.role), ...(volumes ? ['nfs-common'] : [])],
    // EFS's recommended NFS options; the platform unit requires this mount (RequiresMountsFor).
    ...(volumes ? { mounts: [[`${volumes}:/`, P.volumes, 'nfs4', EFS_MOUNT_OPTIONS, '0', '0']] } : {}),
    write_files: sandboxHostFiles(config, inputs),
    runcmd: [
      P.installBundle,
      ...(inputs.role !== 'fleet-gateway' ? [P.dataVolumeScript] : []),
      `install -d -m 0700 ${P.state}`,
      ...(volumes ? [`install -d -m 0700 ${P.volumes}`, `mountpoint -q ${P.volumes} || mount ${P.volumes}`] : []),
      `ln -sf ${P.wrapper} /usr/local/bin/sandbox-kit`,
      // The host's Redis requires its password before anything of the kit talks to it.
      ...(inputs.role !== 'fleet-gateway' ? [P.redisAuth, `systemctl restart ${SANDBOX_UNITS.redis}`] : []),
      // runsc of Debian 12 itself is too old for the kit (docs/runtime.md#runsc): its backports' build is taken.
      ...(inputs.role !== 'fleet-gateway' && config.sandboxHost.runtime === 'runsc'
        ? ['DEBIAN_FRONTEND=noninteractive apt-get install -y -t bookworm-backports runsc']
        : []),
      'systemctl daemon-reload',
      `systemctl enable --now ${sandboxUnits(inputs.role).join(' ')}`,
      ...(inputs.role === 'fleet-host' && inputs.templateInput ? [`${P.buildTemplate} < ${BOOT_TEMPLATE_INPUT}`] : []),
    ],
  };
  return `#cloud-config\n${stringify(doc, { lineWidth: 0, blockQuote: 'literal' })}`;
}
