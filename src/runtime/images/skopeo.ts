/**
 * The registry side of an image pull, done by Debian's `skopeo` (containers/image: the distribution API, token auth,
 * Docker Hub's and ECR's quirks, digest verification of every blob it stores). This file builds its command lines,
 * writes the credentials it reads (an auth file of mode 0600, never an argument another user could see in `ps`), and
 * turns its failures into errors that say what went wrong and where.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { exec } from '../../util/exec';
import { allowsInsecure, ecrRegion, type ImageReference } from './reference';

/** Credentials for one registry: a user and password (a token), or AWS ECR's, exchanged by the ECR credential helper. */
export type RegistryCredentials =
  | { username: string; password: string }
  | {
      /** Pull from ECR with the AWS credentials given, or (none given) the host's own (its instance role). */
      ecr: { accessKeyId?: string; secretAccessKey?: string; region?: string };
    };

/**
 * What went wrong, for the caller's status code: the registry refused, has nothing there, the image is unusable, or
 * it does not fit the data root (`disk`).
 */
export type PullErrorKind = 'auth' | 'not-found' | 'platform' | 'digest' | 'tls' | 'unreachable' | 'invalid' | 'disk' | 'other';

export class ImagePullError extends Error {
  constructor(
    readonly kind: PullErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'ImagePullError';
  }
}

/** The OCI platform names of this host: `amd64`/`arm64` on linux. */
export function hostPlatform(): { os: string; architecture: string } {
  const arch: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };
  return { os: 'linux', architecture: arch[process.arch] ?? process.arch };
}

export interface SkopeoContext {
  ref: ImageReference;
  /** Shown in messages: what the user asked for. */
  shown: string;
  credentials?: RegistryCredentials;
  insecureRegistries: readonly string[];
  platform: { os: string; architecture: string };
  /** A private directory for the auth file. */
  scratchDir: string;
  timeoutMs: number;
  /** Ends a skopeo run under way (a pull given up). */
  signal?: AbortSignal;
}

/**
 * The auth file skopeo reads for this registry (containers-auth.json), or none: mode 0600 in a directory of its own
 * (0700) under the scratch directory, which the caller removes whole. With ECR keys that directory is also the
 * credential helper's home, so its log never lands in the host's.
 */
export function writeAuthFile(ctx: SkopeoContext): string | undefined {
  const c = ctx.credentials;
  if (!c) return undefined;
  const content =
    'ecr' in c
      ? { credHelpers: { [ctx.ref.registry]: 'ecr-login' } }
      : { auths: { [ctx.ref.registry]: { auth: Buffer.from(`${c.username}:${c.password}`).toString('base64') } } };
  fs.mkdirSync(ctx.scratchDir, { recursive: true, mode: 0o700 });
  const dir = path.join(ctx.scratchDir, `auth-${randomBytes(6).toString('hex')}`);
  fs.mkdirSync(dir, { mode: 0o700 });
  const file = path.join(dir, 'auth.json');
  fs.writeFileSync(file, JSON.stringify(content), { mode: 0o600 });
  return file;
}

/** Removes what writeAuthFile made. */
export function removeAuthFile(file: string | undefined): void {
  if (file) fs.rmSync(path.dirname(file), { recursive: true, force: true });
}

/** The credential helper skopeo runs for ECR (Debian's amazon-ecr-credential-helper). */
export const ECR_HELPER = 'docker-credential-ecr-login';

/**
 * The environment of a skopeo run. With ECR keys, the helper exchanges those keys alone (no session token or profile
 * of the host's mixed in), keeps no token cache (the cache is keyed by the access key ID, which is no secret), and
 * has the auth file's private directory as its home. Without keys the host's own AWS identity applies.
 */
export function skopeoEnv(ctx: SkopeoContext, base: NodeJS.ProcessEnv, authFile: string | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  const c = ctx.credentials;
  if (c && 'ecr' in c) {
    if (c.ecr.accessKeyId && c.ecr.secretAccessKey) {
      for (const k of ['AWS_SESSION_TOKEN', 'AWS_SECURITY_TOKEN', 'AWS_PROFILE', 'AWS_DEFAULT_PROFILE']) delete env[k];
      env.AWS_ACCESS_KEY_ID = c.ecr.accessKeyId;
      env.AWS_SECRET_ACCESS_KEY = c.ecr.secretAccessKey;
      env.AWS_ECR_DISABLE_CACHE = 'true';
      if (authFile) env.HOME = path.dirname(authFile);
    }
    const region = c.ecr.region ?? ecrRegion(ctx.ref.registry);
    if (region) env.AWS_REGION = region;
  }
  return env;
}

/** Whether an executable `name` is on `PATH`. */
function onPath(name: string, pathVar: string | undefined): boolean {
  return (pathVar ?? '')
    .split(':')
    .filter((d) => path.isAbsolute(d))
    .some((d) => {
      try {
        fs.accessSync(path.join(d, name), fs.constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
}

/** Global flags: no signature policy file needed (the digest is what pins an image here), the platform to pick. */
function globalFlags(ctx: SkopeoContext): string[] {
  return ['--insecure-policy', '--override-os', ctx.platform.os, '--override-arch', ctx.platform.architecture];
}

/** `skopeo inspect` of `transport` (docker://...): the image's digest, platform and layers, fetched from the registry. */
export function inspectArgv(ctx: SkopeoContext, transport: string, authFile: string | undefined, extra: string[] = []): string[] {
  const tls = allowsInsecure(ctx.ref.registry, ctx.insecureRegistries) ? ['--tls-verify=false'] : [];
  return ['skopeo', ...globalFlags(ctx), 'inspect', ...tls, ...(authFile ? ['--authfile', authFile] : []), ...extra, transport];
}

/** `skopeo copy` of `transport` into an OCI layout whose blobs go to the shared blob directory. */
export function copyArgv(ctx: SkopeoContext, transport: string, authFile: string | undefined, layout: string, blobDir: string): string[] {
  const tls = allowsInsecure(ctx.ref.registry, ctx.insecureRegistries) ? ['--src-tls-verify=false'] : [];
  return [
    'skopeo',
    ...globalFlags(ctx),
    'copy',
    '--quiet',
    ...tls,
    ...(authFile ? ['--src-authfile', authFile] : []),
    '--dest-shared-blob-dir',
    blobDir,
    transport,
    `oci:${layout}:image`,
  ];
}

/** What to check when the registry refused, for the kind of credentials given. */
function authHint(c: RegistryCredentials | undefined): string {
  if (c === undefined) return ' without credentials: give them (fromImage(image, { username, password }))';
  if ('ecr' in c) {
    if (!c.ecr.accessKeyId)
      return " with this host's own AWS identity (its instance role): give keys with fromAWSRegistry, or let the role pull from this repository";
    return ' with the AWS keys given: check the access key, the secret key and the region given to fromAWSRegistry, and that the identity may pull from this repository (ecr:GetAuthorizationToken, ecr:BatchGetImage, ecr:GetDownloadUrlForLayer)';
  }
  if (c.username === '_json_key')
    return ' with the service account key given: check the key given to fromGCPRegistry and that its account may read this repository';
  return ' with the credentials given: check the username and password (fromImage(image, { username, password }))';
}

/** Turns skopeo's stderr into an error naming the image and the registry, and what to do about it. */
export function classifySkopeoError(ctx: SkopeoContext, stderr: string): ImagePullError {
  const detail = stderr
    .trim()
    .split('\n')
    .filter(Boolean)
    .slice(-3)
    .join(' | ')
    .replace(/^time="[^"]*" level=\w+ msg="?/, '');
  const reg = ctx.ref.registry;
  const img = JSON.stringify(ctx.shown);
  // First: its message carries two digests, whose hex may hold "401" or "404". HTTP statuses count only as whole
  // numbers for the same reason (and for ports and sizes).
  if (/digest did not match|digest mismatch|computed digest/i.test(stderr))
    return new ImagePullError(
      'digest',
      `registry ${reg} served content for ${img} that does not match its digest; nothing was stored (${detail})`,
    );
  if (/unauthorized|authentication required|denied|\b401\b|\b403 Forbidden|invalid username\/password/i.test(stderr))
    return new ImagePullError('auth', `registry ${reg} refused access to ${img}${authHint(ctx.credentials)} (${detail})`);
  if (/no image found in (?:image index|manifest list) for architecture|choosing an image from manifest list/i.test(stderr))
    return new ImagePullError(
      'platform',
      `image ${img} has no variant for ${ctx.platform.os}/${ctx.platform.architecture}, the platform of this host (${detail})`,
    );
  if (/manifest unknown|name unknown|not found|\b404\b/i.test(stderr))
    return new ImagePullError('not-found', `registry ${reg} has no image ${img} (unknown repository, tag or digest) (${detail})`);
  if (/server gave HTTP response to HTTPS client/i.test(stderr))
    return new ImagePullError(
      'tls',
      `registry ${reg} speaks plain HTTP; list it in images.insecureRegistries of the stack config to allow that (${detail})`,
    );
  if (/x509|certificate|tls:/i.test(stderr))
    return new ImagePullError('tls', `registry ${reg}: its TLS certificate is not trusted by this host (${detail})`);
  if (/connection refused|no such host|i\/o timeout|network is unreachable|dial tcp/i.test(stderr))
    return new ImagePullError('unreachable', `registry ${reg} cannot be reached (${detail})`);
  return new ImagePullError('other', `pulling ${img} from ${reg} failed: ${detail}`);
}

/** Runs skopeo; a non-zero exit becomes an ImagePullError. */
export async function runSkopeo(ctx: SkopeoContext, argv: string[], authFile: string | undefined): Promise<string> {
  if (ctx.credentials && 'ecr' in ctx.credentials && !onPath(ECR_HELPER, process.env.PATH))
    throw new ImagePullError(
      'other',
      `pulling from ECR (${ctx.ref.registry}) needs its credential helper ${ECR_HELPER}, which this host lacks (Debian package amazon-ecr-credential-helper; bash scripts/setup-host.sh installs it)`,
    );
  const r = await exec(argv, {
    timeoutMs: ctx.timeoutMs,
    env: skopeoEnv(ctx, process.env, authFile),
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  ctx.signal?.throwIfAborted();
  if (r.code === 127 || /ENOENT/.test(r.stderr))
    throw new ImagePullError('other', 'skopeo is not installed on this host (bash scripts/setup-host.sh installs it)');
  if (r.code !== 0) throw classifySkopeoError(ctx, r.stderr || `exit code ${r.code}`);
  return r.stdout;
}
