/**
 * The procedures served through @connectrpc/connect (decoding, dispatch, envelopes, end-stream frames and errors
 * are the library's): the whole process service and the filesystem procedures other than Stat and ListDir, which
 * the server answers on its own fast path before a request gets here.
 */
import type { ConnectRouter } from '@connectrpc/connect';
import type { AgentServices } from './call-context';
import { Filesystem } from './gen/filesystem_pb';
import { Process } from './gen/process_pb';
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
