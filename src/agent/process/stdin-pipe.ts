/**
 * The input of a process that keeps stdin: a real pipe, not the socket pair Node's `stdio: 'pipe'` gives. bash reads
 * /etc/bash.bashrc and ~/.bashrc for `bash -c` when its stdin is a socket (it takes that for rshd), so a command
 * would run the user's interactive profile where envd, whose children get pipes, runs none. Node has no call for an
 * anonymous pipe, so this makes a FIFO in a directory of its own, opens both ends, and removes the name at once.
 * A process without stdin gets /dev/null (the caller's `'ignore'`), as envd gives it.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';

const open = promisify(fs.open);
const close = promisify(fs.close);

export interface StdinPipe {
  /** The read end, for the child's fd 0; close it once the child has it. */
  childEnd: number;
  /** The write end, non-blocking, for the agent. */
  writer: net.Socket;
}

export async function openStdinPipe(): Promise<StdinPipe> {
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'agent-stdin-'));
  const fifo = path.join(dir, 'stdin');
  try {
    await new Promise<void>((resolve, reject) => execFile('mkfifo', ['-m', '600', fifo], (err) => (err ? reject(err) : resolve())));
    // Opening a FIFO for reading blocks until it has a writer: hold one read-write end while the two ends open.
    const both = await open(fifo, fs.constants.O_RDWR);
    try {
      const reader = await open(fifo, fs.constants.O_RDONLY);
      const writer = await open(fifo, fs.constants.O_WRONLY).catch(async (err: unknown) => {
        await close(reader);
        throw err;
      });
      return { childEnd: reader, writer: new net.Socket({ fd: writer, readable: false, writable: true }) };
    } finally {
      await close(both);
    }
  } finally {
    await fs.promises.rm(dir, { recursive: true, force: true });
  }
}
