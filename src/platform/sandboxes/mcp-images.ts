import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { builtinCatalog } from '../../mcp/catalog/load';
import type { Catalog } from '../../mcp/catalog/schema';
import type { ValidMcpConfig } from '../../mcp/config/validate';
import { DEFAULT_IMAGES_DIR, type ImageInfo, imageInfoPath, imageKey, PREINSTALL_FILE, parsePreinstall } from '../../mcp/launch/image-dir';
import type { PulledImage } from '../../runtime';
import { pullImage } from '../../runtime/images';
import type { DiskAdmission } from '../../runtime/admission';
import { existsInLayers, insideTree, readInLayers, resolveInLayers } from '../../runtime/layer-view';
import { checkSandboxMcp } from './mcp-check';
import { DEFAULT_ID_MAPPING } from '../../runtime/id-shift';
import type { PathHolds, Release } from '../../util/path-holds';
import type { McpImageSource } from './mcp-attach';

/**
 * The OCI images of the catalog servers a create's `mcp` names, as read-only layers beside the sandbox's own: each
 * image's layers, relocated under /opt/mcp-images/<key>/rootfs (hard links into the shared layer store, made once
 * per image digest), with <key>/image.json saying what runs. The in-sandbox gateway runs the entrypoint inside that
 * filesystem. An image that cannot be fetched becomes a layer with <key>/error holding the reason, which the gateway
 * reports in its status and its tools' answers; the sandbox still starts. An image its template already holds (the
 * template builder placed it, mcpPreinstallFor) is not fetched again.
 */

const run = promisify(execFile);

export interface McpImageOptions {
  /** Pulls an image (runtime's pullImage with the platform's store). */
  pull(reference: string): Promise<PulledImage>;
  /** Where relocated layers are kept: on the same filesystem as the pulled layers (hard links). */
  dir: string;
  /**
   * A registry that stands in for Docker Hub for the catalog's images (`host[:port]`), e.g. a mirror of `mcp/*`
   * in a network without Docker Hub; references naming another registry are pulled as they are.
   */
  mirror?: string;
  log?(line: string): void;
}

/** The image reference to pull: a Docker Hub one (`mcp/time`) through the mirror when one is set. */
export function pullReference(ref: string, mirror: string | undefined): string {
  const first = ref.split('/')[0];
  const hub = !ref.includes('/') || !(first.includes('.') || first.includes(':') || first === 'localhost');
  if (mirror === undefined || !hub) return ref;
  return `${mirror}/${ref.startsWith('docker.io/') ? ref.slice('docker.io/'.length) : ref}`;
}

const OWNER = DEFAULT_ID_MAPPING.base;

/** mkdir -p, each made dir owned by the sandbox's root (so /opt stays root's own inside). */
function mkdirOwned(root: string, rel: string): string {
  let at = root;
  for (const part of rel.split('/').filter(Boolean)) {
    at = path.join(at, part);
    if (!fs.existsSync(at)) {
      fs.mkdirSync(at, { mode: 0o755 });
      fs.chownSync(at, OWNER, OWNER);
    }
  }
  return at;
}

function writeOwned(file: string, text: string): void {
  fs.writeFileSync(file, text, { mode: 0o644 });
  fs.chownSync(file, OWNER, OWNER);
}

/** Makes `target` once: built under a temporary name, then renamed into place (a racing build's result is as good). */
async function once(target: string, make: (tmp: string) => Promise<void>): Promise<string> {
  if (fs.existsSync(target)) return target;
  const tmp = `${target}.${process.pid}.${Date.now()}.tmp`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true, mode: 0o755 });
  fs.chownSync(tmp, OWNER, OWNER);
  try {
    await make(tmp);
    fs.renameSync(tmp, target);
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!fs.existsSync(target)) throw err;
  }
  return target;
}

/** What runs of a pulled image (its image.json). */
function imageInfoOf(ref: string, image: PulledImage): ImageInfo {
  return {
    ref,
    entrypoint: image.config.entrypoint ?? [],
    cmd: image.config.cmd ?? [],
    env: Object.entries(image.config.env).map(([k, v]) => `${k}=${v}`),
    ...(image.config.workingDir ? { workingDir: image.config.workingDir } : {}),
  };
}

const relDir = (key: string) => path.join(DEFAULT_IMAGES_DIR, key).slice(1);

/** The relocated layers of one pulled image, topmost first: image.json on top, then each image layer. */
async function imageLayers(ref: string, image: PulledImage, dir: string): Promise<string[]> {
  const key = imageKey(ref);
  const base = path.join(dir, `${key}-${image.digest.replace(/[^A-Za-z0-9]/g, '-')}`);
  fs.mkdirSync(base, { recursive: true, mode: 0o700 });
  const out: string[] = [];
  const info = imageInfoOf(ref, image);
  out.push(
    await once(path.join(base, 'info'), async (tmp) => {
      writeOwned(path.join(mkdirOwned(tmp, relDir(key)), 'image.json'), `${JSON.stringify(info)}\n`);
    }),
  );
  for (const [i, layer] of image.layers.entries()) {
    out.push(
      await once(path.join(base, `layer-${i}`), async (tmp) => {
        const rootfs = mkdirOwned(tmp, path.join(relDir(key), 'rootfs'));
        // Hard links to the layer's files; directories copied with owners and xattrs (overlayfs's opaque marks).
        await run('cp', ['-a', '-l', `${layer}/.`, rootfs]);
        const st = fs.statSync(layer);
        fs.chownSync(rootfs, st.uid, st.gid);
        fs.chmodSync(rootfs, st.mode & 0o7777);
      }),
    );
  }
  return out;
}

/** A layer that says why an image is not there. */
async function errorLayer(ref: string, reason: string, dir: string): Promise<string> {
  const key = imageKey(ref);
  const hash = createHash('sha256').update(`${ref}\n${reason}`).digest('hex').slice(0, 16);
  return once(path.join(dir, 'errors', `${key}-${hash}`), async (tmp) => {
    writeOwned(path.join(mkdirOwned(tmp, relDir(key)), 'error'), `${reason}\n`);
  });
}

/** The images of the configured catalog servers that run from one and the template's layers do not hold, each once. */
export function missingImageRefs(config: ValidMcpConfig, catalog: Catalog, templateLayers: readonly string[]): string[] {
  const refs = new Set<string>();
  for (const name of Object.keys(config.servers)) {
    const run = catalog[name]?.run;
    if (run !== undefined && 'image' in run && !existsInLayers(templateLayers, imageInfoPath(run.image.ref).slice(1)))
      refs.add(run.image.ref);
  }
  return [...refs];
}

/**
 * The images of the configured catalog servers that run from one, as read-only layers (topmost first); those the
 * template's layers already hold are left out.
 */
export async function mcpImageLayers(
  config: ValidMcpConfig,
  catalog: Catalog,
  o: McpImageOptions,
  templateLayers: readonly string[] = [],
): Promise<string[]> {
  const layers: string[] = [];
  fs.mkdirSync(path.join(o.dir, 'errors'), { recursive: true, mode: 0o700 });
  for (const ref of missingImageRefs(config, catalog, templateLayers)) {
    const from = pullReference(ref, o.mirror);
    try {
      const image = await o.pull(from);
      layers.push(...(await imageLayers(ref, image, o.dir)));
      o.log?.(`mcp image ${ref}: ${image.digest} from ${from}`);
    } catch (err) {
      const reason = `${from}: ${(err as Error).message}`;
      o.log?.(`mcp image ${ref}: could not be fetched: ${reason}`);
      layers.push(await errorLayer(ref, reason, o.dir));
    }
  }
  return layers;
}

/** Where the catalog's images come from: PlatformOptions.mcpImages. */
export interface McpImageSources {
  mirror?: string;
  insecureRegistries?: string[];
  /** Pull a create's images within it, before its sandbox starts, even where the runtime could attach them after. */
  pullWithinCreate?: boolean;
}

/** The image store creates pull the MCP servers' images into (the storage collector's too). */
export function mcpImageStore(stateDir: string): string {
  return path.join(stateDir, 'images');
}

/**
 * Where a create's image servers come from (McpImageSource), pulled into mcpImageStore (shared with every image
 * pull). The store is held (`holds`) while an image is pulled and placed: the storage collector leaves it whole
 * then. `layers` (a create that pulls before its sandbox starts): the create claims the layers it got before the
 * hold goes. `fetch` (an image attached after the create answered): the image's layers are held before the store's
 * hold goes, until the caller's record names them.
 */
export function mcpImagesFor(
  stateDir: string,
  o: McpImageSources,
  log: (line: string) => void,
  holds?: PathHolds,
  disk?: DiskAdmission,
): McpImageSource {
  const storeDir = mcpImageStore(stateDir);
  const pullOptions = {
    storeDir,
    ...(o.insecureRegistries ? { insecureRegistries: o.insecureRegistries } : {}),
    ...(disk ? { disk } : {}),
  };
  const holdStore = (): Release => {
    fs.mkdirSync(storeDir, { recursive: true, mode: 0o700 });
    return holds?.hold([storeDir]) ?? (() => undefined);
  };
  return {
    ...(o.pullWithinCreate ? { pullWithinCreate: true } : {}),
    missing(mcp, templateLayers) {
      const config = checkSandboxMcp(mcp);
      return config === undefined ? [] : missingImageRefs(config, builtinCatalog(), templateLayers);
    },
    async layers(mcp, templateLayers) {
      const config = checkSandboxMcp(mcp);
      if (config === undefined) return [];
      const release = holdStore();
      try {
        return await mcpImageLayers(
          config,
          builtinCatalog(),
          {
            pull: (reference) => pullImage(reference, pullOptions),
            dir: path.join(storeDir, 'mcp'),
            ...(o.mirror ? { mirror: o.mirror } : {}),
            log,
          },
          templateLayers,
        );
      } finally {
        release();
      }
    },
    async fetch(ref, signal) {
      const from = pullReference(ref, o.mirror);
      const release = holdStore();
      try {
        const image = await pullImage(from, { ...pullOptions, signal });
        log(`mcp image ${ref}: ${image.digest} from ${from}`);
        return { layers: image.layers, info: imageInfoOf(ref, image), release: holds?.hold(image.layers) ?? (() => undefined) };
      } catch (err) {
        signal.throwIfAborted();
        const reason = `${from}: ${(err as Error).message}`;
        log(`mcp image ${ref}: could not be fetched: ${reason}`);
        return { error: reason };
      } finally {
        release();
      }
    },
  };
}

/**
 * The template builder's last step for the images a template asks for in its preinstall list (PREINSTALL_FILE, written
 * by `mcp-gateway pull` or the mcp-gateway template): each one its layers do not hold yet is pulled into the builder's
 * image store and placed as read-only layers above the build's, exactly as a create would. An image that cannot be
 * fetched fails the build, naming it and the reason: the template was asked to hold it.
 */
export function mcpPreinstallFor(o: McpImageSources) {
  return async (layers: readonly string[], io: { imagesDir: string; onLine(line: string): void }): Promise<string[]> => {
    const text = readInLayers(layers, PREINSTALL_FILE.slice(1));
    if (text === undefined) return [];
    const out: string[] = [];
    for (const ref of parsePreinstall(text)) {
      if (existsInLayers(layers, imageInfoPath(ref).slice(1))) continue;
      const from = pullReference(ref, o.mirror);
      io.onLine(`preinstalling the image ${ref} (from ${from}) under ${path.posix.join(DEFAULT_IMAGES_DIR, imageKey(ref))}`);
      let image: PulledImage;
      try {
        image = await pullImage(from, {
          storeDir: io.imagesDir,
          ...(o.insecureRegistries ? { insecureRegistries: o.insecureRegistries } : {}),
          onLine: io.onLine,
        });
      } catch (err) {
        throw new Error(`the image ${ref} could not be preinstalled: ${from}: ${(err as Error).message}`);
      }
      out.push(...(await imageLayers(ref, image, path.join(io.imagesDir, 'mcp'))));
      io.onLine(`${ref}: ${image.digest}, ${image.layers.length} layer(s)`);
    }
    return out;
  };
}

/** At most this many image filesystems per sandbox get a /dev of their own. */
const MAX_IMAGE_ROOTS = 64;

/**
 * The image filesystems a sandbox's layers hold (`/opt/mcp-images/<key>/rootfs` beside its image.json, from the
 * template or the create), which the runtime gives a minimal /dev of their own for the servers the gateway runs in
 * them with chroot (SandboxSpec.chrootDirs). Names are read from each layer's own directory, never through a
 * link; whether an image is there is decided in the merged view.
 */
export function mcpImageRoots(layers: readonly string[]): string[] {
  const rel = DEFAULT_IMAGES_DIR.slice(1);
  const keys = new Set<string>();
  for (const layer of layers) {
    if (!insideTree(layer, `${rel}/x`)) continue;
    let names: string[];
    try {
      names = fs.readdirSync(path.join(layer, rel));
    } catch {
      continue;
    }
    for (const name of names) if (/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(name)) keys.add(name);
  }
  return [...keys]
    .filter(
      (key) =>
        resolveInLayers(layers, `${rel}/${key}/rootfs`, false)?.stat.isDirectory() === true &&
        existsInLayers(layers, `${rel}/${key}/image.json`),
    )
    .sort()
    .slice(0, MAX_IMAGE_ROOTS)
    .map((key) => `${DEFAULT_IMAGES_DIR}/${key}/rootfs`);
}
