/**
 * The spawn helper: a small node process that starts host commands for the process that started it (spawn-helper.ts).
 * Starting a child costs its parent a fork of its whole address space, on its event loop; this process stays small,
 * so that cost stays small and is not paid on the parent's loop. Requests and results arrive and leave over the IPC
 * channel; each command runs with execHere, as it would have in the parent.
 *
 * It ignores SIGINT and SIGTERM (a terminal's Ctrl-C reaches the whole process group; the parent decides when it
 * ends). When the channel closes (the parent released it, exited or died) nothing is left to keep it alive but its
 * running commands: it exits once they have ended, each within its own deadline. They are not killed, as they would
 * not be had the parent started them itself.
 */
import { execHere } from './exec-here';
import type { HelperReply, HelperRequest } from './spawn-helper-protocol';

const running = new Map<number, AbortController>();

process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => undefined);

process.on('message', (message: HelperRequest) => {
  if (message.kind === 'kill') {
    running.get(message.id)?.abort();
    return;
  }
  const abort = new AbortController();
  running.set(message.id, abort);
  void execHere(message.argv, { ...message.options, signal: abort.signal }).then((result) => {
    running.delete(message.id);
    const reply: HelperReply = { id: message.id, result };
    if (process.connected) process.send?.(reply);
  });
});
