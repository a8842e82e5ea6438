import * as fs from 'node:fs';
import * as path from 'node:path';
import { IMAGE_REF } from '../catalog/schema';

/**
 * Where a catalog server's OCI image is inside a sandbox: `<dir>/<key>/rootfs` (its filesystem) and
 * `<dir>/<key>/image.json` (what runs: entrypoint, command, env, working dir). A fetch that failed leaves
 * `<dir>/<key>/error` with the reason instead, which the gateway reports as the server's failure.
 */

/** Where the template (or the platform) puts images. */
export const DEFAULT_IMAGES_DIR = '/opt/mcp-images';

/**
 * Where the platform attaches images it pulls after the create answered (the runtime's attach dir): `<key>/pulling`
 * (the reference) while the pull runs, then `<key>/rootfs` and `<key>/image.json`, or `<key>/error`.
 */
export const ATTACHED_IMAGES_DIR = '/run/mcp-images';

/** The directories the gateway looks in, in order. */
export const DEFAULT_IMAGES_DIRS = [DEFAULT_IMAGES_DIR, ATTACHED_IMAGES_DIR];

/** An image that is being pulled: not there yet, not failed either. */
export class ImagePulling extends Error {}

/**
 * A template's request to its builder: the image references (one a line) whose filesystems the build is to place under
 * DEFAULT_IMAGES_DIR, so sandboxes of the template need no pull. `mcp-gateway pull` and the mcp-gateway template
 * append to it; the kit's template builder reads it at the end of a build (platform/sandboxes/mcp-images.ts).
 */
export const PREINSTALL_FILE = `${DEFAULT_IMAGES_DIR}/preinstall`;

/** At most this many images per template. */
export const MAX_PREINSTALL = 64;

/** The shell command a build step runs to ask for `refs` (checked references: no quoting needed beyond '...'). */
export function preinstallCommand(refs: string[]): string {
  for (const ref of refs) if (!IMAGE_REF.test(ref)) throw new Error(`not an image reference: ${JSON.stringify(ref)}`);
  return `mkdir -p ${DEFAULT_IMAGES_DIR} && printf '%s\\n' ${refs.map((r) => `'${r}'`).join(' ')} >> ${PREINSTALL_FILE}`;
}

/** The references of a preinstall list, each once; a line that is not one is an error naming it. */
export function parsePreinstall(text: string): string[] {
  const refs = new Set<string>();
  const bad: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (IMAGE_REF.test(line)) refs.add(line);
    else bad.push(JSON.stringify(line.slice(0, 100)));
  }
  if (bad.length > 0) throw new Error(`${PREINSTALL_FILE}: not image references: ${bad.join(', ')}`);
  if (refs.size > MAX_PREINSTALL) throw new Error(`${PREINSTALL_FILE}: ${refs.size} images; at most ${MAX_PREINSTALL} may be preinstalled`);
  return [...refs];
}

/** Where an image's image.json is in a sandbox: present once the image is there (from its template or its create). */
export function imageInfoPath(ref: string): string {
  return path.posix.join(DEFAULT_IMAGES_DIR, imageKey(ref), 'image.json');
}

export interface ImageInfo {
  ref: string;
  entrypoint: string[];
  cmd: string[];
  /** `NAME=value` lines, as an OCI image config has them. */
  env: string[];
  workingDir?: string;
}

export interface ResolvedImage extends ImageInfo {
  rootfs: string;
  /** The image has /bin/sh (needed to enter its working dir before its entrypoint runs). */
  hasShell: boolean;
}

/** A directory name for an image reference: letters, digits, `.`, `-`, `_` (`mcp/time:latest` is `mcp_time_latest`). */
export function imageKey(ref: string): string {
  return ref.replace(/[^A-Za-z0-9._-]/g, '_');
}

/** Finds an image under each of `dirs` in turn; throws the recorded fetch error, or where it looked. */
export function imageResolver(dirs: string[]) {
  return (ref: string): ResolvedImage => {
    const key = imageKey(ref);
    for (const dir of dirs) {
      const base = path.join(dir, key);
      let info: ImageInfo;
      try {
        info = JSON.parse(fs.readFileSync(path.join(base, 'image.json'), 'utf8')) as ImageInfo;
      } catch {
        let reason: string | undefined;
        try {
          reason = fs.readFileSync(path.join(base, 'error'), 'utf8').trim();
        } catch {}
        if (reason) throw new Error(`image ${ref} could not be fetched: ${reason}`);
        if (fs.existsSync(path.join(base, 'pulling'))) throw new ImagePulling(`image ${ref} is being pulled`);
        continue;
      }
      const rootfs = path.join(base, 'rootfs');
      return { ...info, rootfs, hasShell: fs.existsSync(path.join(rootfs, 'bin/sh')) };
    }
    throw new Error(
      `image ${ref} is not in this sandbox (looked in ${dirs.map((d) => path.join(d, key)).join(', ')}); preinstall it with \`sandbox-kit template build --template mcp-gateway --server NAME\``,
    );
  };
}
