/**
 * Waiting for a response's socket to take more: resolves on 'drain' or 'close'. With `stallMs`, a socket that takes
 * nothing for that long is destroyed (a client that stops reading cannot hold the agent's buffers).
 */
import type { ServerResponse } from 'node:http';

export function drainOrClose(res: ServerResponse, stallMs?: number): Promise<void> {
  return new Promise((resolve) => {
    const timer =
      stallMs === undefined
        ? undefined
        : setTimeout(() => {
            res.destroy();
            done();
          }, stallMs);
    const done = () => {
      clearTimeout(timer);
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
