/**
 * Images for the lab's registry, made with Debian's `umoci` in an OCI layout on disk (each `insert` one layer, a
 * whiteout or an opaque directory a layer of its own, the config edited in place) and pushed with `skopeo`. The image
 * tests and the pull benchmark make their images this way from the cached Debian root file system.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execOk } from '../util/exec';

const LONG = 10 * 60_000;

export interface ImageConfigEdit {
  env?: Record<string, string>;
  workingDir?: string;
  user?: string;
  architecture?: string;
}

/** One OCI layout of images under `dir`, named by tag. */
export class OciLayoutImages {
  constructor(readonly dir: string) {}

  private image(tag: string): string {
    return `${this.dir}:${tag}`;
  }

  /** The layout, with an empty image `tag`. */
  async init(tag: string): Promise<void> {
    if (!fs.existsSync(path.join(this.dir, 'oci-layout'))) await execOk(['umoci', 'init', '--layout', this.dir]);
    await execOk(['umoci', 'new', '--image', this.image(tag)]);
  }

  /** `from` plus one layer with the tree `source` at `target`, as `tag` (`from` itself when no tag is given). */
  async insert(from: string, source: string, target = '/', tag = from, opaque = false): Promise<void> {
    await execOk(
      ['umoci', 'insert', '--no-history', ...(opaque ? ['--opaque'] : []), '--image', this.image(from), '--tag', tag, source, target],
      { timeoutMs: LONG },
    );
  }

  /** `from` plus one layer that removes `target` (a whiteout), as `tag`. */
  async whiteout(from: string, target: string, tag = from): Promise<void> {
    await execOk(['umoci', 'insert', '--no-history', '--image', this.image(from), '--tag', tag, '--whiteout', target]);
  }

  async configure(from: string, edit: ImageConfigEdit, tag = from): Promise<void> {
    const args = ['umoci', 'config', '--no-history', '--image', this.image(from), '--tag', tag];
    for (const [k, v] of Object.entries(edit.env ?? {})) args.push('--config.env', `${k}=${v}`);
    if (edit.workingDir) args.push('--config.workingdir', edit.workingDir);
    if (edit.user) args.push('--config.user', edit.user);
    if (edit.architecture) args.push('--architecture', edit.architecture);
    await execOk(args);
  }

  /** Pushes `tag` to `reference` (`host:port/repo:tag`) over plain HTTP (a loopback registry), as `user` when given. */
  async push(tag: string, reference: string, user?: { username: string; password: string }): Promise<void> {
    const creds = user ? ['--dest-creds', `${user.username}:${user.password}`] : [];
    await execOk(
      [
        'skopeo',
        '--insecure-policy',
        'copy',
        '--quiet',
        '--dest-tls-verify=false',
        ...creds,
        `oci:${this.dir}:${tag}`,
        `docker://${reference}`,
      ],
      { timeoutMs: LONG },
    );
  }

  /** The layer digests of `tag`, bottom first (from its manifest in the layout). */
  layerDigests(tag: string): string[] {
    const index = JSON.parse(fs.readFileSync(path.join(this.dir, 'index.json'), 'utf8')) as {
      manifests: Array<{ digest: string; annotations?: Record<string, string> }>;
    };
    const entry = index.manifests.find((m) => m.annotations?.['org.opencontainers.image.ref.name'] === tag);
    if (!entry) throw new Error(`no image ${tag} in ${this.dir}`);
    const blob = (d: string) => path.join(this.dir, 'blobs', ...d.split(':'));
    const manifest = JSON.parse(fs.readFileSync(blob(entry.digest), 'utf8')) as { layers: Array<{ digest: string }> };
    return manifest.layers.map((l) => l.digest);
  }
}
