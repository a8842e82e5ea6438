/** CreateWatcher, GetWatcherEvents and RemoveWatcher: WatchDir for clients that poll instead of streaming. */
import { create } from '@bufbuild/protobuf';
import type { HandlerContext } from '@connectrpc/connect';
import type { AgentServices } from '../call-context';
import {
  type CreateWatcherRequest,
  type CreateWatcherResponse,
  CreateWatcherResponseSchema,
  type GetWatcherEventsRequest,
  type GetWatcherEventsResponse,
  GetWatcherEventsResponseSchema,
  type RemoveWatcherRequest,
  type RemoveWatcherResponse,
  RemoveWatcherResponseSchema,
} from '../../contract/gen/filesystem_pb';
import { eventMessage, watchedDir } from './watch-dir';

export function createWatcher(svc: AgentServices, req: CreateWatcherRequest, ctx: HandlerContext): CreateWatcherResponse {
  const dir = watchedDir(svc, req.path, ctx);
  return create(CreateWatcherResponseSchema, { watcherId: svc.watchers.create(dir.toString(), req.recursive, req.includeEntry) });
}

export function getWatcherEvents(svc: AgentServices, req: GetWatcherEventsRequest): GetWatcherEventsResponse {
  const { events, includeEntry } = svc.watchers.take(req.watcherId);
  return create(GetWatcherEventsResponseSchema, { events: events.map((e) => eventMessage(svc, e, includeEntry)) });
}

export function removeWatcher(svc: AgentServices, req: RemoveWatcherRequest): RemoveWatcherResponse {
  svc.watchers.remove(req.watcherId);
  return create(RemoveWatcherResponseSchema, {});
}
