/**
 * The volume file API (`/volumecontent/{volumeID}/...`) as E2B's SDK calls it: list, stat, read, write, mkdir,
 * remove and metadata, authorised by the volume's own token (`Authorization: Bearer`), not by an API key. Served
 * by the platform's API server, where the SDK looks (E2B_VOLUME_API_URL, else the API host).
 */
import * as fs from 'node:fs';
import { LOWER_ALNUM, randomText } from '../../util/random-text';
import { ApiError, type ApiRequest, type Route } from '../http/types';
import { validate } from '../http/validate';
import { queryObject } from '../sandboxes/requests';
import { type AnchoredTree, pathComponents, shownPath, VolumePathError } from './anchored-fs';
import { listQuerySchema, metadataBodySchema, pathQuerySchema, writeQuerySchema } from './requests';
import type { VolumeService } from './service';
import { entryStat } from './view';

function bearerOf(req: ApiRequest): string | undefined {
  return /^Bearer (\S+)$/i.exec(req.raw.headers.authorization ?? '')?.[1];
}

/** VolumePathError as the API's error; anything else as it is. */
/** The volume's file system has no room (its disk is full, volumes/service.ts). */
function isFull(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

function answering<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof VolumePathError) throw new ApiError(err.status, err.message);
    if (isFull(err)) throw new ApiError(507, 'the volume is full: remove files from it first');
    throw err;
  }
}

class OverLimit extends Error {}

/**
 * Writes the body to `fd` until more than `limit` bytes came or the volume is full; the rest is read and dropped
 * (so the client reads the answer rather than a reset connection), and OverLimit thrown.
 */
async function writeBounded(body: AsyncIterable<Buffer>, fd: number, limit: number): Promise<void> {
  let seen = 0;
  let full = false;
  for await (const chunk of body) {
    seen += chunk.length;
    if (seen > limit || full) continue;
    try {
      for (let off = 0; off < chunk.length; ) off += fs.writeSync(fd, chunk, off);
    } catch (err) {
      if (!isFull(err)) throw err;
      full = true;
    }
  }
  if (seen > limit || full) throw new OverLimit();
}

export function volumeContentRoutes(volumes: VolumeService): Route[] {
  const open = (req: ApiRequest) => volumes.forToken(req.params.volumeID, bearerOf(req));
  const stat = (tree: AnchoredTree, parts: string[]) =>
    answering(() => {
      const s = tree.lstat(parts);
      return entryStat(shownPath(parts), s, (id) => volumes.insideId(id), s.isSymbolicLink() ? tree.readlink(parts) : undefined);
    });
  const own = (q: { uid?: number; gid?: number; mode?: number }, dir: boolean) => ({
    uid: volumes.hostId(q.uid, 'uid') ?? volumes.defaultOwner,
    gid: volumes.hostId(q.gid, 'gid') ?? volumes.defaultOwner,
    mode: q.mode ?? (dir ? 0o755 : 0o644),
  });
  const base = '/volumecontent/:volumeID';
  return [
    {
      method: 'GET',
      path: `${base}/dir`,
      auth: 'none',
      handler: async (req) => {
        const { tree } = await open(req);
        const q = validate(listQuerySchema, queryObject(req.query), 'query');
        const parts = answering(() => pathComponents(q.path));
        const entries = answering(() => tree.list(parts, q.depth));
        return {
          status: 200,
          body: entries.map((e) => entryStat(shownPath(e.parts), e.stat, (id) => volumes.insideId(id), e.target)),
        };
      },
    },
    {
      method: 'POST',
      path: `${base}/dir`,
      auth: 'none',
      handler: async (req) => {
        const { record, tree } = await open(req);
        const q = validate(writeQuerySchema, queryObject(req.query), 'query');
        const parts = answering(() => pathComponents(q.path));
        await volumes.checkStorage(record.teamID);
        answering(() => tree.mkdir(parts, own(q, true), q.force === true));
        return { status: 201, body: stat(tree, parts) };
      },
    },
    {
      method: 'GET',
      path: `${base}/path`,
      auth: 'none',
      handler: async (req) => {
        const { tree } = await open(req);
        const q = validate(pathQuerySchema, queryObject(req.query), 'query');
        return {
          status: 200,
          body: stat(
            tree,
            answering(() => pathComponents(q.path)),
          ),
        };
      },
    },
    {
      method: 'PATCH',
      path: `${base}/path`,
      auth: 'none',
      handler: async (req) => {
        const { tree } = await open(req);
        const q = validate(pathQuerySchema, queryObject(req.query), 'query');
        const body = validate(metadataBodySchema, req.body ?? {}, 'body');
        const parts = answering(() => pathComponents(q.path));
        const change = {
          ...(body.uid !== undefined ? { uid: volumes.hostId(body.uid, 'uid') } : {}),
          ...(body.gid !== undefined ? { gid: volumes.hostId(body.gid, 'gid') } : {}),
          ...(body.mode !== undefined ? { mode: body.mode } : {}),
        };
        answering(() => tree.setMetadata(parts, change));
        return { status: 200, body: stat(tree, parts) };
      },
    },
    {
      method: 'DELETE',
      path: `${base}/path`,
      auth: 'none',
      handler: async (req) => {
        const { record, tree } = await open(req);
        const q = validate(pathQuerySchema, queryObject(req.query), 'query');
        const parts = answering(() => pathComponents(q.path));
        answering(() => tree.remove(parts));
        await volumes.account(record, await volumes.usage(record.volumeID), false);
        return { status: 204 };
      },
    },
    {
      method: 'GET',
      path: `${base}/file`,
      auth: 'none',
      handler: async (req) => {
        const { tree } = await open(req);
        const q = validate(pathQuerySchema, queryObject(req.query), 'query');
        const parts = answering(() => pathComponents(q.path));
        const { fd, size } = answering(() => tree.openFile(parts));
        return {
          status: 200,
          stream: { contentType: 'application/octet-stream', body: fs.createReadStream('', { fd, autoClose: true }), length: size },
        };
      },
    },
    {
      method: 'PUT',
      path: `${base}/file`,
      auth: 'none',
      rawBody: true,
      handler: async (req) => {
        const { record, tree } = await open(req);
        const q = validate(writeQuerySchema, queryObject(req.query), 'query');
        const parts = answering(() => pathComponents(q.path));
        const owner = own(q, false);
        // The team's other volumes as they are now (their sandboxes may have written them), so the check below is true.
        await volumes.measureTeam(record.teamID);
        const before = await volumes.usage(record.volumeID);
        const temp = answering(() => tree.createTemp(parts, owner, `.sandbox-kit-write-${randomText(LOWER_ALNUM, 12)}`));
        const replaced = temp.existing?.isFile() ? temp.existing.blocks * 512 : 0;
        const room = Math.max(0, Math.min(volumes.maxBytes - (before - replaced), volumes.room(record.volumeID)));
        let fdOpen = true;
        try {
          await writeBounded(req.raw, temp.fd, room);
          const allocated = fs.fstatSync(temp.fd).blocks * 512;
          fs.closeSync(temp.fd);
          fdOpen = false;
          // The team's stored bytes: what the volume holds once the new file replaces the old one.
          await volumes.account(record, before - replaced + allocated);
        } catch (err) {
          if (fdOpen) fs.closeSync(temp.fd);
          temp.abort();
          if (err instanceof OverLimit) {
            throw new ApiError(
              413,
              `volume ${JSON.stringify(record.name)} is limited to ${volumes.maxBytes} bytes and holds ${before} now: this write does not fit (nothing was written)`,
            );
          }
          throw err;
        }
        answering(() => temp.commit(q.force === true));
        return { status: 200, body: stat(tree, parts) };
      },
    },
  ];
}
