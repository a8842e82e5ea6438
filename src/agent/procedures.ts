/**
 * Every procedure of the agent's two services by path, and whether its request is one message (unary) or a stream;
 * and the shape of the router that serves those the server does not answer itself. Written out rather than read from
 * the services' descriptors so that the server can check a call before it loads the process service and its
 * descriptors (server.ts loads them on first use); test/unit/agent/procedures.test.ts holds it equal to them.
 */
import type * as http from 'node:http';

const UNARY = 'unary';
const STREAM = 'stream';

export const PROCEDURES: ReadonlyMap<string, 'unary' | 'stream'> = new Map([
  ['/filesystem.Filesystem/Stat', UNARY],
  ['/filesystem.Filesystem/MakeDir', UNARY],
  ['/filesystem.Filesystem/Move', UNARY],
  ['/filesystem.Filesystem/ListDir', UNARY],
  ['/filesystem.Filesystem/Remove', UNARY],
  ['/filesystem.Filesystem/WatchDir', STREAM],
  ['/filesystem.Filesystem/CreateWatcher', UNARY],
  ['/filesystem.Filesystem/GetWatcherEvents', UNARY],
  ['/filesystem.Filesystem/RemoveWatcher', UNARY],
  ['/process.Process/List', UNARY],
  ['/process.Process/Connect', STREAM],
  ['/process.Process/Start', STREAM],
  ['/process.Process/Update', UNARY],
  ['/process.Process/StreamInput', STREAM],
  ['/process.Process/SendInput', UNARY],
  ['/process.Process/SendSignal', UNARY],
  ['/process.Process/CloseStdin', UNARY],
]);

/**
 * Serves a call through the router; `deadlineMs` is its Connect-Timeout-Ms as the server parsed it, and a unary call's
 * `body` has been read (and decompressed) by the server.
 */
export type RouterDispatch = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  deadlineMs: number | undefined,
  body?: Uint8Array,
) => void;
