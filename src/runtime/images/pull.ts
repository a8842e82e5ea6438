/**
 * `pullImage(reference, options)`: an OCI image from any registry that speaks the distribution API, as read-only
 * overlayfs layers owned by the user namespace's ids, plus its config. The one entry point for everything that
 * starts from an image (the template builder, MCP servers run from images).
 *
 * Store layout under `storeDir` (shared by every image and every caller):
 *   blobs/sha256/<hex>                 compressed blobs as skopeo verified and stored them (reused by later pulls)
 *   layers/<base>-<size>/sha256-<hex>  one unpacked layer per uncompressed digest (diff_id), shared between images
 *   images/<digest>-<os>-<arch>.json   what a pulled image is: its config, so a repeat pull needs only the registry's digest
 *   tmp/                               one-layer layouts and half-unpacked layers; removed as they finish
 * A layer directory that exists is complete (unpacked under a temporary name, then renamed into place), so a pull that
 * fails, or two that race, leave nothing half-written.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_ID_MAPPING, type IdMapping } from '../id-shift';
import { type ImageConfig, parseImageConfig } from './image-config';
import { blobPath, type LayerBlob, unpackLayer } from './layer-unpack';
import { AdmissionError, type DiskAdmission } from '../admission';
import { MIB } from '../sandbox-disk';
import { canonicalReference, type ImageReference, parseImageReference } from './reference';
import { leftoversOf, StoreClaims } from './store-claims';
import {
  copyArgv,
  hostPlatform,
  ImagePullError,
  inspectArgv,
  type RegistryCredentials,
  runSkopeo,
  type SkopeoContext,
  removeAuthFile,
  writeAuthFile,
} from './skopeo';

export interface PullOptions {
  /** Where blobs and unpacked layers are kept (see the file comment); the same for every caller that shares layers. */
  storeDir: string;
  credentials?: RegistryCredentials;
  /** Registries (`host[:port]`) where plain HTTP is allowed besides loopback ones. */
  insecureRegistries?: readonly string[];
  /** The ids the layers are owned by (default the kit's range, 100000:65536). */
  mapping?: IdMapping;
  /** Default: this host's (linux/amd64 here). */
  platform?: { os: string; architecture: string };
  onLine?: (line: string) => void;
  /** Per registry operation and per layer unpack (default 15 min). */
  timeoutMs?: number;
  /** Gives the pull up: a registry operation under way is ended, no further layer is unpacked (rejects). */
  signal?: AbortSignal;
  /**
   * The data root's disk check (admission.ts, DiskAdmission.guard): the blobs to fetch are held at their size before
   * they are fetched (refused when they do not fit), and the pull is ended once what it writes (blobs, unpacked
   * layers) takes the data root past its room; then it rejects with the AdmissionError, and what it fetched and
   * unpacked is removed.
   */
  disk?: Pick<DiskAdmission, 'guard'>;
}

export interface ResolvedImage {
  /** `registry/repository:tag` or `@digest`, as pulled. */
  reference: string;
  /** The digest the registry answered for the reference (a multi-platform index's, when it is one). */
  digest: string;
  os: string;
  architecture: string;
}

export interface PulledImage extends ResolvedImage {
  /** Unpacked read-only layers, topmost first (as overlayfs's lowerdir and a template's layers list them). */
  layers: string[];
  config: ImageConfig;
}

interface ImageRecord {
  config: string;
  layers: Array<Omit<LayerBlob, 'diffId'>>;
}

/** What the pulls of this process are using in their stores (store-claims.ts). */
const claims = new StoreClaims();

/** The blob files and layer directories an image of `record` uses. */
function pathsOf(storeDir: string, m: IdMapping, record: ImageRecord, config: ImageConfig): string[] {
  const blobDir = path.join(storeDir, 'blobs');
  return [
    blobPath(blobDir, sha256(record.config)),
    ...record.layers.map((l) => blobPath(blobDir, l.digest)),
    ...config.diffIds.map((d) => layerDirOf(storeDir, m, d)),
  ];
}

/** What the image records in the store claim (a record that cannot be read claims nothing). */
function recordedPaths(storeDir: string, m: IdMapping): Set<string> {
  const dir = path.join(storeDir, 'images');
  const out = new Set<string>();
  for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    if (!name.endsWith('.json')) continue;
    try {
      const record = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as ImageRecord;
      for (const p of pathsOf(storeDir, m, record, parseImageConfig(record.config))) out.add(p);
    } catch {
      // a record being written, or a broken one: it protects nothing
    }
  }
  return out;
}

function contextOf(reference: string, o: PullOptions): SkopeoContext {
  const parsed = parseImageReference(reference);
  if (!parsed.ok) throw new ImagePullError('invalid', parsed.message);
  return {
    ref: parsed.ref,
    shown: reference,
    ...(o.credentials ? { credentials: o.credentials } : {}),
    insecureRegistries: o.insecureRegistries ?? [],
    platform: o.platform ?? hostPlatform(),
    scratchDir: path.join(o.storeDir, 'tmp'),
    timeoutMs: o.timeoutMs ?? 15 * 60_000,
    ...(o.signal ? { signal: o.signal } : {}),
  };
}

function transportOf(ref: ImageReference, digest?: string): string {
  return `docker://${digest ? `${ref.registry}/${ref.repository}@${digest}` : canonicalReference(ref)}`;
}

async function withAuthFile<T>(ctx: SkopeoContext, fn: (authFile: string | undefined) => Promise<T>): Promise<T> {
  const authFile = writeAuthFile(ctx);
  try {
    return await fn(authFile);
  } finally {
    removeAuthFile(authFile);
  }
}

async function inspectWith(ctx: SkopeoContext, authFile: string | undefined): Promise<ResolvedImage> {
  const out = await runSkopeo(ctx, inspectArgv(ctx, transportOf(ctx.ref), authFile, ['--no-tags']), authFile);
  const info = JSON.parse(out) as { Digest?: string; Os?: string; Architecture?: string };
  const os = info.Os ?? '';
  const architecture = info.Architecture ?? '';
  if (os !== ctx.platform.os || architecture !== ctx.platform.architecture)
    throw new ImagePullError(
      'platform',
      `image ${JSON.stringify(ctx.shown)} is for ${os}/${architecture}; this host runs ${ctx.platform.os}/${ctx.platform.architecture} and cannot run it`,
    );
  if (!info.Digest) throw new ImagePullError('other', `registry ${ctx.ref.registry} answered no digest for ${JSON.stringify(ctx.shown)}`);
  return { reference: canonicalReference(ctx.ref), digest: info.Digest, os, architecture };
}

interface RawManifest {
  manifests?: Array<{ digest?: string; platform?: { os?: string; architecture?: string } }>;
  layers?: Array<{ digest?: string; size?: number }>;
}

/**
 * The layer blobs (digest, compressed size) of the image at `digest` for this host's platform, from its manifest as
 * the registry serves it (an index: the platform's manifest in it); [] for a manifest that lists no sizes.
 */
async function layerBlobsOf(
  ctx: SkopeoContext,
  authFile: string | undefined,
  digest: string,
): Promise<Array<{ digest: string; size: number }>> {
  const raw = async (d: string) =>
    JSON.parse(await runSkopeo(ctx, inspectArgv(ctx, transportOf(ctx.ref, d), authFile, ['--raw']), authFile)) as RawManifest;
  let manifest = await raw(digest);
  if (manifest.manifests) {
    const mine = manifest.manifests.find(
      (m) => m.platform?.os === ctx.platform.os && m.platform.architecture === ctx.platform.architecture,
    );
    manifest = mine?.digest ? await raw(mine.digest) : {};
  }
  return (manifest.layers ?? []).flatMap((l) =>
    typeof l.digest === 'string' && typeof l.size === 'number' && l.size >= 0 ? [{ digest: l.digest, size: l.size }] : [],
  );
}

/**
 * Asks the registry what `reference` is now (one request round, nothing stored): its digest and platform. Fails with
 * an ImagePullError for bad credentials, an unknown repository or tag, an image of another platform.
 */
export async function resolveImage(reference: string, o: PullOptions): Promise<ResolvedImage> {
  const ctx = contextOf(reference, o);
  return withAuthFile(ctx, (authFile) => inspectWith(ctx, authFile));
}

function sha256(data: Buffer | string): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/** Reads a blob and checks it against its digest. */
function verifiedBlob(blobDir: string, digest: string): Buffer {
  const data = fs.readFileSync(blobPath(blobDir, digest));
  if (sha256(data) !== digest) throw new ImagePullError('digest', `stored blob ${digest} does not match its digest`);
  return data;
}

/** Copies the image's manifest, config and missing blobs in (skopeo verifies each); returns what the image is. */
async function copyImage(
  ctx: SkopeoContext,
  authFile: string | undefined,
  digest: string,
  storeDir: string,
  claim: Set<string>,
): Promise<ImageRecord> {
  const blobDir = path.join(storeDir, 'blobs');
  const layout = path.join(storeDir, 'tmp', `pull-${randomBytes(6).toString('hex')}`);
  fs.mkdirSync(blobDir, { recursive: true, mode: 0o700 });
  try {
    await runSkopeo(ctx, copyArgv(ctx, transportOf(ctx.ref, digest), authFile, layout, blobDir), authFile);
    const index = JSON.parse(fs.readFileSync(path.join(layout, 'index.json'), 'utf8')) as { manifests: Array<{ digest: string }> };
    const manifestDigest = index.manifests[0]?.digest;
    if (!manifestDigest) throw new ImagePullError('other', `the copy of ${JSON.stringify(ctx.shown)} has no manifest`);
    claim.add(blobPath(blobDir, manifestDigest));
    const manifest = JSON.parse(verifiedBlob(blobDir, manifestDigest).toString('utf8')) as {
      config: { digest: string };
      layers: Array<{ digest: string; mediaType: string; size: number }>;
    };
    const config = verifiedBlob(blobDir, manifest.config.digest).toString('utf8');
    return { config, layers: manifest.layers.map(({ digest: d, mediaType, size }) => ({ digest: d, mediaType, size })) };
  } finally {
    fs.rmSync(layout, { recursive: true, force: true });
  }
}

function layerDirOf(storeDir: string, m: IdMapping, diffId: string): string {
  return path.join(storeDir, 'layers', `${m.base}-${m.size}`, diffId.replace(':', '-'));
}

/** The image's record when it was pulled before and every layer of it is still unpacked. */
function cachedRecord(recordFile: string, storeDir: string, m: IdMapping): { record: ImageRecord; config: ImageConfig } | undefined {
  try {
    const record = JSON.parse(fs.readFileSync(recordFile, 'utf8')) as ImageRecord;
    const config = parseImageConfig(record.config);
    return config.diffIds.every((d) => fs.existsSync(layerDirOf(storeDir, m, d))) ? { record, config } : undefined;
  } catch {
    return undefined;
  }
}

/** One layer unpacked into its content-addressed place (once: a layer already there is reused). */
async function ensureLayer(ctx: SkopeoContext, o: PullOptions, blob: LayerBlob, label: string, platform: ResolvedImage): Promise<string> {
  const m = o.mapping ?? DEFAULT_ID_MAPPING;
  const log = o.onLine ?? (() => undefined);
  const dir = layerDirOf(o.storeDir, m, blob.diffId);
  if (fs.existsSync(dir)) {
    log(`${label}: cached`);
    return dir;
  }
  const started = Date.now();
  const blobDir = path.join(o.storeDir, 'blobs');
  const tmp = path.join(o.storeDir, 'tmp');
  const staging = path.join(tmp, `layer-${randomBytes(6).toString('hex')}`);
  fs.mkdirSync(path.dirname(dir), { recursive: true, mode: 0o755 });
  try {
    await unpackLayer(blob, {
      blobDir,
      target: staging,
      scratch: tmp,
      mapping: m,
      platform,
      timeoutMs: ctx.timeoutMs,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
  } catch (err) {
    // A blob that fails umoci's digest check is dropped, so the next pull fetches it again.
    if (/digest|checksum|hash/i.test((err as Error).message)) fs.rmSync(blobPath(blobDir, blob.digest), { force: true });
    throw new ImagePullError('invalid', `image ${JSON.stringify(ctx.shown)}: ${(err as Error).message}`);
  }
  try {
    fs.renameSync(staging, dir);
  } catch {
    // Another pull placed the same layer meanwhile: theirs is as good as ours.
    fs.rmSync(staging, { recursive: true, force: true });
  }
  log(`${label}: unpacked (${(blob.size / 1e6).toFixed(1)} MB compressed, ${((Date.now() - started) / 1000).toFixed(1)} s)`);
  return dir;
}

/**
 * Pulls `reference` (anything `docker pull` takes) into the store and returns its layers and config. A layer already
 * unpacked (by any image) is reused as it is; an image already pulled at the same digest costs one registry round.
 */
export async function pullImage(reference: string, o: PullOptions): Promise<PulledImage> {
  const ctx = contextOf(reference, o);
  const m = o.mapping ?? DEFAULT_ID_MAPPING;
  fs.mkdirSync(path.join(o.storeDir, 'tmp'), { recursive: true, mode: 0o700 });
  const claim = claims.open();
  try {
    return await withAuthFile(ctx, (authFile) => pullWith(ctx, o, m, claim, authFile));
  } finally {
    claims.release(claim);
  }
}

async function pullWith(
  ctx: SkopeoContext,
  o: PullOptions,
  m: IdMapping,
  claim: Set<string>,
  authFile: string | undefined,
): Promise<PulledImage> {
  const reference = ctx.shown;
  const log = o.onLine ?? (() => undefined);
  const resolved = await inspectWith(ctx, authFile);
  log(`image ${reference}: ${resolved.reference} is ${resolved.digest} (${resolved.os}/${resolved.architecture})`);
  const recordFile = path.join(o.storeDir, 'images', `${resolved.digest.replace(':', '-')}-${resolved.os}-${resolved.architecture}.json`);
  const cached = cachedRecord(recordFile, o.storeDir, m);
  const fetchAndUnpack = async (c: SkopeoContext) => {
    let known = cached;
    if (!known) {
      const record = await copyImage(c, authFile, resolved.digest, o.storeDir, claim);
      const config = parseImageConfig(record.config);
      if (config.os !== resolved.os || config.architecture !== resolved.architecture)
        throw new ImagePullError(
          'platform',
          `image ${JSON.stringify(reference)} is for ${config.os}/${config.architecture}; this host runs ${resolved.os}/${resolved.architecture}`,
        );
      if (config.diffIds.length !== record.layers.length)
        throw new ImagePullError(
          'invalid',
          `image ${JSON.stringify(reference)}: its config lists ${config.diffIds.length} layers, its manifest ${record.layers.length}`,
        );
      known = { record, config };
    }
    const { record, config } = known;
    for (const p of pathsOf(o.storeDir, m, record, config)) claim.add(p);
    const layers: string[] = [];
    for (const [i, blob] of record.layers.entries()) {
      const diffId = config.diffIds[i] ?? '';
      const label = `layer ${i + 1}/${record.layers.length} ${diffId.slice(0, 19)}`;
      c.signal?.throwIfAborted();
      layers.unshift(await ensureLayer(c, o, { ...blob, diffId }, label, resolved));
    }
    return { record, config, layers };
  };
  let pulled: Awaited<ReturnType<typeof fetchAndUnpack>>;
  if (cached || !o.disk) pulled = await fetchAndUnpack(ctx);
  else {
    // Held: the blobs not stored yet, at their size; what they unpack to is watched as it lands.
    const blobDir = path.join(o.storeDir, 'blobs');
    const blobs = await layerBlobsOf(ctx, authFile, resolved.digest);
    const missing = blobs.filter((b) => !fs.existsSync(blobPath(blobDir, b.digest)));
    for (const b of missing) claim.add(blobPath(blobDir, b.digest));
    const askedMB = Math.ceil(missing.reduce((sum, b) => sum + b.size, 0) / MIB);
    const storedBefore = new Set(storedBlobs(blobDir));
    const layersBefore = new Set(storedLayers(o.storeDir, m));
    pulled = await o.disk
      .guard(askedMB, 'this image', (signal) => fetchAndUnpack({ ...ctx, signal: o.signal ? AbortSignal.any([o.signal, signal]) : signal }))
      .catch((err: Error) => {
        // Past the room: what this pull stored goes; what another pull or an image pulled meanwhile uses stays.
        if (err instanceof AdmissionError) {
          const appeared = [
            ...storedBlobs(blobDir).filter((b) => !storedBefore.has(b)),
            ...storedLayers(o.storeDir, m).filter((l) => !layersBefore.has(l)),
          ];
          const gone = leftoversOf(appeared, claim, claims.othersThan(claim), recordedPaths(o.storeDir, m));
          for (const p of gone) fs.rmSync(p, { recursive: true, force: true });
          throw new ImagePullError('disk', `image ${JSON.stringify(reference)}: ${err.message}; nothing was kept`);
        }
        throw err;
      });
  }
  fs.mkdirSync(path.dirname(recordFile), { recursive: true, mode: 0o700 });
  const recordTmp = `${recordFile}.${randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(recordTmp, JSON.stringify(pulled.record));
  fs.renameSync(recordTmp, recordFile);
  return { ...resolved, layers: pulled.layers, config: pulled.config };
}

/** The blob files in the store (paths). */
function storedBlobs(blobDir: string): string[] {
  const dir = path.join(blobDir, 'sha256');
  return fs.existsSync(dir) ? fs.readdirSync(dir).map((n) => path.join(dir, n)) : [];
}

/** The unpacked layer directories in the store for mapping `m` (paths). */
function storedLayers(storeDir: string, m: IdMapping): string[] {
  const dir = path.dirname(layerDirOf(storeDir, m, 'sha256:x'));
  return fs.existsSync(dir) ? fs.readdirSync(dir).map((n) => path.join(dir, n)) : [];
}
