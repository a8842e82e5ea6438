import { connect } from 'node:net';

export interface TwoAnswers {
  first: string;
  second: string;
  /** When the server closed the connection, counted from the first answer; absent when it did not. */
  closedAfterMs?: number;
}

/**
 * Sends `request` on one TCP connection to 127.0.0.1:`port`, waits `pauseMs` after its answer (whole once it ends with
 * `answerEnd`), then sends it again on the same connection. Each answer is what arrived for it: the second is '' when
 * the server closed the connection during the pause. A reset counts as that close; any other socket error rejects.
 */
export function sameConnectionTwice(port: number, request: string, answerEnd: string, pauseMs: number): Promise<TwoAnswers> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const answers = ['', ''];
    let n = 0;
    let answeredAt = 0;
    let closedAfterMs: number | undefined;
    const done = () => resolve({ first: answers[0], second: answers[1], ...(closedAfterMs !== undefined ? { closedAfterMs } : {}) });
    socket.on('data', (c: Buffer) => {
      answers[n] += c.toString();
      if (n === 0 && answers[0].endsWith(answerEnd)) {
        n = 1;
        answeredAt = Date.now();
        setTimeout(() => (socket.destroyed ? done() : socket.write(request)), pauseMs);
      } else if (n === 1 && answers[1].endsWith(answerEnd)) {
        socket.destroy();
        done();
      }
    });
    socket.on('close', () => {
      if (n === 1 && closedAfterMs === undefined) closedAfterMs = Date.now() - answeredAt;
    });
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' || err.code === 'EPIPE' ? done() : reject(err)));
    socket.write(request);
  });
}
