/**
 * Filesystem.WatchDir: a start event first, then one event per change under the directory, keepalives while it is
 * quiet, until the client goes or the call's deadline passes. Events wait in a bounded queue; a client that does
 * not read them loses the oldest, never the agent's memory.
 */
import * as fs from 'node:fs';
import { create } from '@bufbuild/protobuf';
import type { HandlerContext } from '@connectrpc/connect';
import { Code } from '../../contract/connect-codes';
import { timerDelay } from '../../contract/connect-timeout';
import { bytesToText } from '../bytes-text';
import { callTimeoutMs, keepaliveMs, type AgentServices } from '../call-context';
import { AgentError, fsError } from '../errors';
import {
  EventType,
  type FilesystemEvent,
  FilesystemEventSchema,
  type WatchDirRequest,
  type WatchDirResponse,
  WatchDirResponseSchema,
} from '../../contract/gen/filesystem_pb';
import { entryMessage } from './entry-message';
import { pathOf, userOf } from './request-user';
import { DirWatch, type WatchEvent, type WatchEventKind } from './watch';

const MAX_QUEUED = 10_000;

export function watchedDir(svc: AgentServices, requested: string, ctx: HandlerContext): Buffer {
  const p = pathOf(requested, userOf(svc, ctx));
  let st: fs.Stats;
  try {
    st = fs.statSync(p);
  } catch (err) {
    throw fsError(err, `WatchDir ${bytesToText(p)}`);
  }
  if (!st.isDirectory()) throw new AgentError(Code.InvalidArgument, `WatchDir ${bytesToText(p)}: not a directory`);
  return p;
}

const EVENT_TYPES: Readonly<Record<WatchEventKind, EventType>> = {
  create: EventType.CREATE,
  write: EventType.WRITE,
  remove: EventType.REMOVE,
  chmod: EventType.CHMOD,
};

export function eventMessage(svc: AgentServices, e: WatchEvent, includeEntry: boolean): FilesystemEvent {
  const entry = includeEntry ? entryMessage(Buffer.from(e.fullPath), svc.entries) : undefined;
  return create(FilesystemEventSchema, { name: e.name, type: EVENT_TYPES[e.type], ...(entry ? { entry } : {}) });
}

export async function* watchDir(svc: AgentServices, req: WatchDirRequest, ctx: HandlerContext): AsyncGenerator<WatchDirResponse> {
  const dir = watchedDir(svc, req.path, ctx);
  const queue: WatchEvent[] = [];
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const watch = new DirWatch(
    dir.toString(),
    req.recursive,
    (e) => {
      if (queue.length >= MAX_QUEUED) queue.shift();
      queue.push(e);
      notify();
    },
    (err) => {
      failure = err;
      notify();
    },
  );
  const ms = callTimeoutMs(ctx);
  const delay = ms === undefined ? undefined : timerDelay(ms);
  let expired = false;
  const deadline =
    delay === undefined
      ? undefined
      : setTimeout(() => {
          expired = true;
          notify();
        }, delay);
  const onAbort = () => notify();
  ctx.signal.addEventListener('abort', onAbort);
  const interval = keepaliveMs(ctx);
  try {
    yield create(WatchDirResponseSchema, { event: { case: 'start', value: {} } });
    while (!ctx.signal.aborted && !expired) {
      if (failure) throw new AgentError(Code.Internal, `WatchDir ${bytesToText(dir)}: ${failure.message}`);
      const e = queue.shift();
      if (e) {
        yield create(WatchDirResponseSchema, { event: { case: 'filesystem', value: eventMessage(svc, e, req.includeEntry) } });
        continue;
      }
      const timedOut = await new Promise<boolean>((resolve) => {
        const t = setTimeout(() => resolve(true), interval);
        wake = () => {
          clearTimeout(t);
          resolve(false);
        };
      });
      if (timedOut) yield create(WatchDirResponseSchema, { event: { case: 'keepalive', value: {} } });
    }
    if (expired) throw new AgentError(Code.DeadlineExceeded, `WatchDir ended at its Connect-Timeout-Ms (${ms} ms)`);
  } finally {
    clearTimeout(deadline);
    ctx.signal.removeEventListener('abort', onAbort);
    watch.close();
  }
}
