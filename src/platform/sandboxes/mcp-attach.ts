/**
 * The images of a create's catalog servers that its template lacks, pulled after the create answered and attached to
 * the running sandbox (the runtime's attachImage) under ATTACHED_IMAGES_DIR, where the in-sandbox MCP gateway finds
 * them. While a pull runs, `<key>/pulling` names the reference (the gateway reports the server as `pulling`); then
 * the image's filesystem is attached at `<key>/rootfs` and `<key>/image.json` written, or `<key>/error` says why it
 * could not be fetched (the gateway reports it; the sandbox keeps running).
 *
 * The record names each image (SandboxRecord.attachedImages) from the create on, and its layers once pulled: they are
 * held against the storage collector from the pull until the record names them, and by the record for as long as
 * the sandbox exists (attachedImageLayers). A restart from its files (resume from disk) attaches them again. A kill
 * ends the sandbox's pulls under way: the registry operation is stopped and its hold released.
 */
import { ATTACHED_IMAGES_DIR, type ImageInfo, imageKey } from '../../mcp/launch/image-dir';
import type { SandboxRuntime } from '../../runtime/types';
import type { Release } from '../../util/path-holds';
import type { AttachedImage, SandboxRecord } from './record';
import type { SandboxStore } from './store';

export type FetchedImage = { layers: string[]; info: ImageInfo; release: Release } | { error: string };

/** Where a create's images come from (mcp-images.ts, mcpImagesFor). */
export interface McpImageSource {
  /** Always `layers`, never attach (the peer the attaching is measured against: scripts/bench/mcp-image-pull.ts). */
  readonly pullWithinCreate?: boolean;
  /** The images of the catalog servers in `mcp` that `templateLayers` lack; a bad `mcp` is a 400. */
  missing(mcp: unknown, templateLayers: readonly string[]): string[];
  /** Those images as read-only layers for the sandbox's root, pulled now (the runtime cannot attach: attachesAfterStart). */
  layers(mcp: unknown, templateLayers: readonly string[]): Promise<string[]>;
  /** One image, its layers held until `release`; or why it could not be fetched. Rejects only when aborted. */
  fetch(ref: string, signal: AbortSignal): Promise<FetchedImage>;
}

export interface McpAttacherOptions {
  runtime: SandboxRuntime;
  store: SandboxStore;
  images: McpImageSource;
  /** Runs `fn` under the sandbox's lock (the service's: no pause, resume or kill in between). */
  locked(sandboxID: string, fn: () => Promise<void>): Promise<void>;
  log(line: string): void;
}

/** The entries of a create whose template lacks `refs`. */
export function pendingImages(refs: readonly string[]): AttachedImage[] {
  return refs.map((ref) => ({ ref, key: imageKey(ref) }));
}

/**
 * The images of a new sandbox: those its origin (a snapshot, a fork's source: TemplateForSandbox.attachedImages)
 * had, as they were (pulled ones are attached at once, pending ones pulled for it), then those of its own create.
 */
export function carriedImages(origin: Pick<SandboxRecord, 'attachedImages'>, refs: readonly string[]): AttachedImage[] {
  const carried = (origin.attachedImages ?? []).map((i) => ({ ...i }));
  const keys = new Set(carried.map((i) => i.key));
  return [...carried, ...pendingImages(refs).filter((i) => !keys.has(i.key))];
}

/** The layers a sandbox's attached images use (the storage collector keeps them). */
export function attachedImageLayers(record: Pick<SandboxRecord, 'attachedImages'>): string[] {
  return (record.attachedImages ?? []).flatMap((i) => i.layers ?? []);
}

/** The record as the storage collector is to see it: its attached images' layers among its own. */
export function withAttachedLayers<R extends Pick<SandboxRecord, 'attachedImages' | 'layers'>>(record: R): R {
  const extra = attachedImageLayers(record);
  return extra.length > 0 && record.layers !== undefined ? { ...record, layers: [...record.layers, ...extra] } : record;
}

/** Whether the sandbox's container runs (or is frozen in memory): something can be attached to it now. */
function hasContainer(record: SandboxRecord): boolean {
  return record.state === 'running' || (record.state === 'paused' && record.pausedTo === 'memory');
}

interface Job {
  abort: AbortController;
  /** Settles when its pulls have ended (their attach waits for the sandbox's lock, after this). */
  pulled: Promise<void>;
}

export class McpImageAttacher {
  private readonly jobs = new Map<string, Job>();

  constructor(private readonly o: McpAttacherOptions) {}

  /** Whether this runtime attaches images to a running sandbox; else a create pulls them before it starts the sandbox. */
  get enabled(): boolean {
    const { runtime, images } = this.o;
    return (
      !images.pullWithinCreate &&
      runtime.attachesAfterStart === true &&
      runtime.attachImage !== undefined &&
      runtime.setAttachedFiles !== undefined
    );
  }

  /**
   * Its attach dir as the record says, right after its container started (create, restart from its files): each
   * image pulled is attached (again), each failed one has its error, each still pulling its marker. An image that
   * cannot be attached again is reported as failed; the sandbox starts anyway.
   */
  async place(record: SandboxRecord): Promise<void> {
    for (const image of record.attachedImages ?? []) await this.placeOne(record.sandboxID, image);
  }

  /** Starts pulling the images of the sandbox not pulled yet (once per sandbox at a time). */
  start(record: SandboxRecord): void {
    const id = record.sandboxID;
    const pending = (record.attachedImages ?? []).filter((i) => i.layers === undefined && i.error === undefined);
    if (pending.length === 0 || this.jobs.has(id)) return;
    const abort = new AbortController();
    const attached: Promise<void>[] = [];
    const pulled = Promise.all(
      pending.map(async (image) => {
        const got = await this.o.images.fetch(image.ref, abort.signal).catch((err: Error) => ({ error: err.message }));
        if (abort.signal.aborted) return void ('release' in got && got.release());
        attached.push(this.attachPulled(id, image.key, got, abort.signal));
      }),
    ).then(() => undefined);
    this.jobs.set(id, { abort, pulled });
    void pulled
      .then(() => Promise.all(attached))
      .catch((err: Error) => this.o.log(`sandbox ${id}: attaching its MCP images failed: ${err.message}`))
      .finally(() => {
        if (this.jobs.get(id)?.abort === abort) this.jobs.delete(id);
      });
  }

  /** Ends the sandbox's pulls under way (its kill or removal); resolves once they stopped and released their holds. */
  async stop(sandboxID: string): Promise<void> {
    const job = this.jobs.get(sandboxID);
    if (!job) return;
    job.abort.abort();
    this.jobs.delete(sandboxID);
    await job.pulled.catch(() => undefined);
  }

  /** The platform's shutdown: every pull under way ends (a sandbox kept on disk pulls again at its next start). */
  async close(): Promise<void> {
    await Promise.all([...this.jobs.keys()].map((id) => this.stop(id)));
  }

  /** Under the sandbox's lock: the record names the result (its layers from now on), then the sandbox gets it. */
  private async attachPulled(id: string, key: string, got: FetchedImage, signal: AbortSignal): Promise<void> {
    try {
      await this.o.locked(id, async () => {
        const record = signal.aborted ? undefined : await this.o.store.get(id);
        const image = record?.attachedImages?.find((i) => i.key === key);
        if (!record || !image || record.state === 'creating') return;
        if ('error' in got) image.error = got.error;
        else {
          image.layers = got.layers;
          image.info = got.info;
        }
        await this.o.store.put(record);
        this.o.log(`sandbox ${id}: MCP image ${image.ref} ${image.error ? `could not be fetched: ${image.error}` : 'pulled'}`);
        if (hasContainer(record)) await this.placeOne(id, image);
      });
    } finally {
      if ('release' in got) got.release();
    }
  }

  private async placeOne(id: string, image: AttachedImage): Promise<void> {
    const runtime = this.o.runtime as Required<Pick<SandboxRuntime, 'attachImage' | 'setAttachedFiles'>>;
    let files: Record<string, string | null>;
    if (image.layers !== undefined && image.info !== undefined) {
      try {
        await runtime.attachImage(id, { key: image.key, layers: image.layers, attachDir: ATTACHED_IMAGES_DIR });
        files = { 'image.json': `${JSON.stringify(image.info)}\n`, pulling: null, error: null };
      } catch (err) {
        this.o.log(`sandbox ${id}: MCP image ${image.ref} could not be attached: ${(err as Error).message}`);
        files = { error: `it was pulled but could not be attached: ${(err as Error).message}\n`, pulling: null };
      }
    } else if (image.error !== undefined) files = { error: `${image.error}\n`, pulling: null };
    else files = { pulling: `${image.ref}\n` };
    runtime.setAttachedFiles(id, image.key, files);
  }
}
