/**
 * Base root filesystems from mmdebstrap (the Debian mirror is all it needs), one per suite and package set, cached
 * under <cache>/rootfs/<suite>-<hash>. A build goes into a temporary directory beside the final one and is renamed
 * into place, so a directory that exists is complete; an flock on the cache entry makes concurrent builders (two
 * test files, a platform and CI's setup step) wait for one build instead of racing.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import type { BaseImages } from './types';

export const DEFAULT_CACHE_ROOT = '/var/cache/sandbox-kit';
export const CACHE_ENV = 'SANDBOX_KIT_CACHE';
export const DEBIAN_MIRROR = 'http://deb.debian.org/debian';
/**
 * The built-in `base` template (and the Debian templates are built from): Debian with a shell, the usual tools and
 * TLS roots, and what code written for E2B's default template expects to find: python3 with pip, node, git, sudo.
 */
export const BASE_PACKAGES = [
  'bash',
  'coreutils',
  'iproute2',
  'curl',
  'ca-certificates',
  'procps',
  'python3',
  'python3-pip',
  'nodejs',
  'git',
  'sudo',
] as const;
/** The default user, as E2B's: uid 1000, home /home/user, bash, sudo without a password. */
export const DEFAULT_USER = { name: 'user', uid: 1000, home: '/home/user' } as const;

/** Image tags this kit builds, and the suite each means. `stable` and `latest` mean the kit's default suite. */
export const DEBIAN_TAGS: ReadonlyMap<string, string> = new Map([
  ['bookworm', 'bookworm'],
  ['12', 'bookworm'],
  ['stable', 'bookworm'],
  ['latest', 'bookworm'],
  ['trixie', 'trixie'],
  ['13', 'trixie'],
]);

/** `debian:<tag>` (or plain `debian`) -> the Debian suite; anything else is an error naming what is supported. */
export function debianSuite(image: string): string {
  const m = /^(?:docker\.io\/)?(?:library\/)?debian(?::([A-Za-z0-9._-]+))?$/.exec(image.trim());
  const tag = m ? (m[1] ?? 'latest') : undefined;
  const suite = tag === undefined ? undefined : DEBIAN_TAGS.get(tag.replace(/-slim$/, ''));
  if (!suite) {
    const supported = [...DEBIAN_TAGS.keys()].map((t) => `debian:${t}`);
    throw new Error(
      `base image ${JSON.stringify(image)} is not available offline; supported: ${supported.join(', ')} (built from the Debian mirror)`,
    );
  }
  return suite;
}

export interface BaseImageRecipe {
  suite: string;
  packages: readonly string[];
  mirror: string;
}

/** The hook that adds the default user after the packages are in, with sudo for anything and no password (as E2B's). */
export function userHook(): string {
  const sudoers = `"$1/etc/sudoers.d/${DEFAULT_USER.name}"`;
  return [
    `chroot "$1" useradd --create-home --uid ${DEFAULT_USER.uid} --user-group --shell /bin/bash ${DEFAULT_USER.name}`,
    `echo '${DEFAULT_USER.name} ALL=(ALL:ALL) NOPASSWD: ALL' > ${sudoers}`,
    `chmod 0440 ${sudoers}`,
  ].join(' && ');
}

export function mmdebstrapArgv(recipe: BaseImageRecipe, target: string): string[] {
  return [
    'mmdebstrap',
    '--variant=minbase',
    `--include=${recipe.packages.join(',')}`,
    `--customize-hook=${userHook()}`,
    recipe.suite,
    target,
    recipe.mirror,
  ];
}

/** The cache entry's name: the suite, and a hash of everything that shapes the result. */
export function cacheEntryName(recipe: BaseImageRecipe): string {
  const hash = createHash('sha256')
    .update(JSON.stringify({ ...recipe, packages: [...recipe.packages].sort(), hook: userHook() }))
    .digest('hex')
    .slice(0, 12);
  return `${recipe.suite}-${hash}`;
}

export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env[CACHE_ENV] || DEFAULT_CACHE_ROOT;
}

export interface MmdebstrapImagesOptions {
  /** Default: $SANDBOX_KIT_CACHE or /var/cache/sandbox-kit. Root file systems go to <cacheRoot>/rootfs. */
  cacheRoot?: string;
  packages?: readonly string[];
  mirror?: string;
  /** A cold build takes 20-40 s; default limit 15 min (a slow mirror). */
  timeoutMs?: number;
}

export class MmdebstrapImages implements BaseImages {
  readonly supported = [...DEBIAN_TAGS.keys()];
  private readonly dir: string;
  private readonly packages: readonly string[];
  private readonly mirror: string;

  constructor(private readonly options: MmdebstrapImagesOptions = {}) {
    this.dir = path.join(options.cacheRoot ?? cacheRoot(), 'rootfs');
    this.packages = options.packages ?? BASE_PACKAGES;
    this.mirror = options.mirror ?? DEBIAN_MIRROR;
  }

  /** Where `image` is (or would be) cached. */
  pathOf(image: string): string {
    return path.join(this.dir, cacheEntryName({ suite: debianSuite(image), packages: this.packages, mirror: this.mirror }));
  }

  async rootfs(image: string, onLine: (line: string) => void = () => undefined): Promise<string> {
    const suite = debianSuite(image);
    const final = this.pathOf(image);
    if (fs.existsSync(final)) return final;
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o755 });
    const tmp = `${final}.tmp-${process.pid}`;
    const lock = `${final}.lock`;
    onLine(`base image debian:${suite}: building ${final} with mmdebstrap (another builder holding ${lock} is waited for)`);
    const script = [
      'tmp="$1"; final="$2"; shift 2',
      '[ -d "$final" ] && { echo "base image: $final was built meanwhile"; exit 0; }',
      'rm -rf "$final".tmp-*',
      '"$@"',
      'mv -T "$tmp" "$final"',
    ].join('\n');
    const argv = [
      'flock',
      lock,
      'sh',
      '-ec',
      script,
      'sh',
      tmp,
      final,
      ...mmdebstrapArgv({ suite, packages: this.packages, mirror: this.mirror }, tmp),
    ];
    const started = Date.now();
    const lines: string[] = [];
    const code = await new Promise<number>((resolve) => {
      const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
      const timer = setTimeout(() => child.kill('SIGKILL'), this.options.timeoutMs ?? 15 * 60_000);
      for (const stream of [child.stdout, child.stderr]) {
        createInterface({ input: stream }).on('line', (line) => {
          lines.push(line);
          if (lines.length > 20) lines.shift();
          onLine(line);
        });
      }
      child.on('error', (err) => {
        lines.push(err.message);
        clearTimeout(timer);
        resolve(127);
      });
      child.on('close', (c) => {
        clearTimeout(timer);
        resolve(c ?? 128);
      });
    });
    if (code !== 0 || !fs.existsSync(final)) {
      fs.rmSync(tmp, { recursive: true, force: true });
      throw new Error(`building base image debian:${suite} failed (exit ${code}): ${lines.slice(-5).join(' | ')}`);
    }
    onLine(`base image debian:${suite}: ready at ${final} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    return final;
  }
}
