/**
 * The procedures served through @connectrpc/connect (decoding, dispatch, envelopes, end-stream frames and errors
 * are the library's): the whole process service and the filesystem procedures other than Stat and ListDir, which
 * the server answers on its own fast path before a request gets here. The dispatch is the library's Node adapter
 * with one change: once the server has answered a call itself (its deadline passed before the handler's answer
 * began), the handler's late answer is dropped instead of written over it.
 */
import { type ConnectRouter, createConnectRouter, createContextValues } from '@connectrpc/connect';
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from '@connectrpc/connect-node';
import type { JsonValue } from '@bufbuild/protobuf';
import { type AgentServices, deadlineKey } from './call-context';
import { MAX_MESSAGE_BYTES } from './connect-protocol';
import type { RouterDispatch } from './procedures';
import { Filesystem } from '../contract/gen/filesystem_pb';
import { Process } from '../contract/gen/process_pb';
import { closeStdin } from './process/close-stdin';
import { connect } from './process/connect';
import { list } from './process/list';
import { sendInput } from './process/send-input';
import { sendSignal } from './process/send-signal';
import { start } from './process/start';
import { streamInput } from './process/stream-input';
import { update } from './process/update';
import { makeDir } from './filesystem/make-dir';
import { move } from './filesystem/move';
import { remove } from './filesystem/remove';
import { watchDir } from './filesystem/watch-dir';
import { createWatcher, getWatcherEvents, removeWatcher } from './filesystem/watcher-procedures';

export function agentRoutes(svc: AgentServices): (router: ConnectRouter) => void {
  return (router) => {
    router.service(Process, {
      list: () => list(svc),
      start: (req, ctx) => start(svc, req, ctx),
      connect: (req, ctx) => connect(svc, req, ctx),
      sendInput: (req) => sendInput(svc, req),
      streamInput: (reqs) => streamInput(svc, reqs),
      sendSignal: (req) => sendSignal(svc, req),
      update: (req) => update(svc, req),
      closeStdin: (req) => closeStdin(svc, req),
    });
    router.service(Filesystem, {
      makeDir: (req, ctx) => makeDir(svc, req, ctx),
      move: (req, ctx) => move(svc, req, ctx),
      remove: (req, ctx) => remove(svc, req, ctx),
      watchDir: (req, ctx) => watchDir(svc, req, ctx),
      createWatcher: (req, ctx) => createWatcher(svc, req, ctx),
      getWatcherEvents: (req) => getWatcherEvents(svc, req),
      removeWatcher: (req) => removeWatcher(svc, req),
    });
  };
}

/** Serves a request through the router; the caller has checked that its path is one of PROCEDURES (procedures.ts). */
export function agentRouter(svc: AgentServices): RouterDispatch {
  const router = createConnectRouter({
    requireConnectProtocolHeader: true,
    // Each message of a streaming call (a unary call's body comes read, within the shared budget: server.ts).
    readMaxBytes: MAX_MESSAGE_BYTES,
    acceptCompression: [compressionGzip, compressionBrotli],
    grpc: false,
    grpcWeb: false,
  });
  agentRoutes(svc)(router);
  const handlers = new Map(router.handlers.map((h) => [h.requestPath, h]));
  return (req, res, deadlineMs, body) => {
    const values = createContextValues().set(deadlineKey, deadlineMs);
    const handler = handlers.get((req.url ?? '').split('?', 1)[0]!)!;
    // Bytes given as the body are parsed as the request's JSON, not read from the request again.
    handler(universalRequestFromNodeRequest(req, res, body as unknown as JsonValue | undefined, values))
      .then(async (answer) => {
        if (res.headersSent || res.destroyed) {
          await answer.body?.[Symbol.asyncIterator]().return?.();
          return;
        }
        await universalResponseToNodeResponse(answer, res);
      })
      .catch(() => {
        // The client went away or the server answered first: nothing is left to tell anyone.
      });
  };
}
