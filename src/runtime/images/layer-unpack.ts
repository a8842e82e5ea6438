/**
 * One image layer unpacked into a directory overlayfs takes as a read-only lower layer, owned by the user
 * namespace's ids. Debian's `umoci` does the unpacking (safe path handling inside the root, hard links, modes with
 * setuid kept, xattrs, its own digest check of the blob) from a one-layer OCI layout made for it, with the id
 * mapping applied as it writes. umoci drops the layer's whiteout entries (there is nothing below them in a one-layer
 * image); overlayfs needs them, so they are read from the layer's file list (GNU tar) and made as overlayfs does:
 * `.wh.<name>` becomes a character device 0/0 named <name>, `.wh..wh..opq` marks its directory opaque
 * (trusted.overlay.opaque=y). A whiteout's parent must be a real directory of this layer, never a symlink, so no
 * entry reaches outside it.
 */
import { setAttributeSync } from '@napi-rs/xattr';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { exec } from '../../util/exec';
import type { IdMapping } from '../id-shift';

export interface LayerBlob {
  /** `sha256:...` of the (compressed) blob, as the manifest names it. */
  digest: string;
  mediaType: string;
  size: number;
  /** `sha256:...` of the uncompressed tar (the config's diff_id). */
  diffId: string;
}

const WHITEOUT_PREFIX = '.wh.';
const OPAQUE = '.wh..wh..opq';
const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const OCI_CONFIG = 'application/vnd.oci.image.config.v1+json';

export function blobPath(blobDir: string, digest: string): string {
  const [algo, hex] = digest.split(':');
  return path.join(blobDir, algo!, hex!);
}

/** The whiteouts of a layer's entry list: paths to hide, and directories made opaque (relative, normalized). */
export function whiteoutsOf(entries: readonly string[]): { hidden: string[]; opaque: string[] } {
  const hidden: string[] = [];
  const opaque: string[] = [];
  for (const entry of entries) {
    const p = path.posix.normalize(entry.replace(/^(\.\/)+/, '').replace(/^\/+/, ''));
    const base = path.posix.basename(p);
    if (!base.startsWith(WHITEOUT_PREFIX)) continue;
    const dir = path.posix.dirname(p);
    if (p.startsWith('../') || p === '..' || dir.split('/').includes('..'))
      throw new Error(`layer entry ${JSON.stringify(entry)} climbs out of the layer`);
    if (base === OPAQUE) opaque.push(dir === '.' ? '' : dir);
    else {
      const name = base.slice(WHITEOUT_PREFIX.length);
      if (name === '' || name === '.' || name === '..' || name.includes('/'))
        throw new Error(`layer entry ${JSON.stringify(entry)} is not a valid whiteout`);
      hidden.push(dir === '.' ? name : `${dir}/${name}`);
    }
  }
  return { hidden, opaque };
}

/** Makes `rel`'s parent directories inside `root` (owned by the namespace's root), refusing any symlink on the way. */
function realParent(root: string, rel: string, m: IdMapping): string {
  let dir = root;
  for (const part of path.posix
    .dirname(rel)
    .split('/')
    .filter((s) => s !== '' && s !== '.')) {
    dir = path.join(dir, part);
    const st = fs.lstatSync(dir, { throwIfNoEntry: false });
    if (!st) {
      fs.mkdirSync(dir, { mode: 0o755 });
      fs.lchownSync(dir, m.base, m.base);
    } else if (!st.isDirectory())
      throw new Error(`whiteout ${JSON.stringify(rel)}: ${part} is not a directory of the layer (a symlink or a file)`);
  }
  return dir;
}

/** Writes the one-layer OCI layout umoci reads (the blob hard-linked in, no copy); returns the layout's directory. */
function oneLayerLayout(dir: string, blobDir: string, layer: LayerBlob, platform: { os: string; architecture: string }): string {
  const blobs = path.join(dir, 'blobs', 'sha256');
  fs.mkdirSync(blobs, { recursive: true, mode: 0o700 });
  const put = (text: string) => {
    const hex = createHash('sha256').update(text).digest('hex');
    fs.writeFileSync(path.join(blobs, hex), text);
    return { digest: `sha256:${hex}`, size: Buffer.byteLength(text) };
  };
  fs.linkSync(blobPath(blobDir, layer.digest), path.join(blobs, layer.digest.split(':')[1]!));
  const config = put(JSON.stringify({ ...platform, rootfs: { type: 'layers', diff_ids: [layer.diffId] }, config: {} }));
  const manifest = put(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: { mediaType: OCI_CONFIG, ...config },
      layers: [{ mediaType: layer.mediaType, digest: layer.digest, size: layer.size }],
    }),
  );
  fs.writeFileSync(path.join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  fs.writeFileSync(
    path.join(dir, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [{ mediaType: OCI_MANIFEST, ...manifest, annotations: { 'org.opencontainers.image.ref.name': 'layer' } }],
    }),
  );
  return dir;
}

/**
 * Unpacks `layer` (its blob in `blobDir`) into `target`, which must not exist; on failure nothing is left there.
 * `scratch` holds the one-layer layout while umoci runs.
 */
export async function unpackLayer(
  layer: LayerBlob,
  o: {
    blobDir: string;
    target: string;
    scratch: string;
    mapping: IdMapping;
    platform: { os: string; architecture: string };
    timeoutMs: number;
    /** Ends umoci and the listing (the unpack rejects, nothing is left in `target`). */
    signal?: AbortSignal;
  },
): Promise<void> {
  const layout = path.join(o.scratch, `layout-${randomBytes(6).toString('hex')}`);
  const m = o.mapping;
  const idMap = `0:${m.base}:${m.size}`;
  try {
    oneLayerLayout(layout, o.blobDir, layer, o.platform);
    const [unpacked, listed] = await Promise.all([
      exec(['umoci', 'raw', 'unpack', '--uid-map', idMap, '--gid-map', idMap, '--image', `${layout}:layer`, o.target], {
        timeoutMs: o.timeoutMs,
        ...(o.signal ? { signal: o.signal } : {}),
      }),
      exec(['tar', '--quoting-style=literal', '-tf', blobPath(o.blobDir, layer.digest)], {
        timeoutMs: o.timeoutMs,
        ...(o.signal ? { signal: o.signal } : {}),
      }),
    ]);
    if (unpacked.code !== 0) {
      const why = unpacked.stderr.trim().split('\n').slice(-2).join(' | ');
      if (unpacked.code === 127) throw new Error('umoci is not installed on this host (bash scripts/setup-host.sh installs it)');
      throw new Error(`layer ${layer.digest} could not be unpacked: ${why}`);
    }
    // umoci has checked the blob against its digest by now, so a missing end-of-archive marker (umoci's own layers
    // end without one; GNU tar says "Unexpected EOF") cuts nothing from the list.
    const endless = listed.code === 2 && /Unexpected EOF in archive/.test(listed.stderr);
    if (listed.code !== 0 && !endless) throw new Error(`layer ${layer.digest} could not be listed: ${listed.stderr.trim()}`);
    const { hidden, opaque } = whiteoutsOf(listed.stdout.split('\n').filter(Boolean));
    for (const dir of opaque) {
      const real = dir === '' ? o.target : realParent(o.target, `${dir}/x`, m);
      setAttributeSync(real, 'trusted.overlay.opaque', Buffer.from('y'));
    }
    const devices = hidden.map((rel) => path.join(realParent(o.target, rel, m), path.posix.basename(rel)));
    if (devices.length > 0) {
      const r = await exec(['sh', '-ec', 'for p; do rm -rf -- "$p"; mknod -- "$p" c 0 0; done', 'sh', ...devices]);
      if (r.code !== 0) throw new Error(`the whiteouts of layer ${layer.digest} could not be made: ${r.stderr.trim()}`);
      for (const d of devices) fs.lchownSync(d, m.base, m.base);
    }
  } catch (err) {
    fs.rmSync(o.target, { recursive: true, force: true });
    throw err;
  } finally {
    fs.rmSync(layout, { recursive: true, force: true });
  }
}
