import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Where a catalog server's OCI image is inside a sandbox: `<dir>/<key>/rootfs` (its filesystem) and
 * `<dir>/<key>/image.json` (what runs: entrypoint, command, env, working dir). A fetch that failed leaves
 * `<dir>/<key>/error` with the reason instead, which the gateway reports as the server's failure.
 */

/** Where the template (or the platform) puts images. */
export const DEFAULT_IMAGES_DIR = '/opt/mcp-images';

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
