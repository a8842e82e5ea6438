import { spawn } from 'node:child_process';
import { chmod, mkdir, open, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Redis from 'ioredis';
import { sleep } from '../util/poll';
import { LOWER_ALNUM, randomText } from '../util/random-text';

/** A unix socket path must fit sockaddr_un (108 bytes with the terminating NUL). */
const MAX_SOCKET_PATH = 107;

export interface PrivateRedis {
  socketPath: string;
  /** Every client authenticates with it (kept in <state dir>/redis/password, 0600). */
  password: string;
  /** Stops the server (SHUTDOWN, which writes the append-only file first). */
  stop(): Promise<void>;
}

/** 40 characters of 36: about 206 bits. */
const PASSWORD_LENGTH = 40;

function connect(socketPath: string, password?: string): Redis {
  return new Redis({
    path: socketPath,
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
    ...(password ? { password } : {}),
  });
}

/** The Redis password of this state dir: made once (0600, created exclusively), then read. */
async function passwordOf(dir: string): Promise<string> {
  const path = join(dir, 'password');
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const password = randomText(LOWER_ALNUM, PASSWORD_LENGTH);
  try {
    await writeFile(path, `${password}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return passwordOf(dir);
    throw err;
  }
  return password;
}

async function answersPing(socketPath: string, password?: string): Promise<boolean> {
  const client = connect(socketPath, password);
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

async function waitForPing(socketPath: string, password: string, timeoutMs: number, exited: () => string | undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const why = exited();
    if (why !== undefined) throw new Error(why);
    if (await answersPing(socketPath, password)) return;
    await sleep(25);
  }
  throw new Error(`redis-server did not answer on ${socketPath} within ${timeoutMs} ms`);
}

/**
 * The platform's own Redis: a unix socket in the state dir (no TCP port), append-only file fsynced on every write,
 * so a platform killed at any moment loses no acknowledged change. A server left running by a platform that was
 * killed is found through its socket and used again (it holds exactly the data this state dir owns).
 */
export async function startPrivateRedis(stateDir: string, log: (line: string) => void = () => {}): Promise<PrivateRedis> {
  const dir = join(stateDir, 'redis');
  const socketPath = join(dir, 'redis.sock');
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) {
    throw new Error(
      `the state dir ${stateDir} is too long for a unix socket path (${socketPath} > ${MAX_SOCKET_PATH} bytes); choose a shorter --state-dir`,
    );
  }
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const password = await passwordOf(dir);
  const stop = async () => {
    const client = connect(socketPath, password);
    client.on('error', () => {});
    try {
      await client.connect();
      await client.call('SHUTDOWN', 'SAVE').catch(() => {});
    } catch {
      // already gone
    } finally {
      client.disconnect();
    }
  };
  if (await answersPing(socketPath, password)) {
    log(`using the platform's Redis still running on ${socketPath}`);
    return { socketPath, password, stop };
  }
  // One started by an earlier version, without a password: it gets this one now, and is used as it is.
  if (await answersPing(socketPath)) {
    const client = connect(socketPath);
    try {
      await client.connect();
      await client.call('CONFIG', 'SET', 'requirepass', password);
    } finally {
      client.disconnect();
    }
    log(`using the platform's Redis still running on ${socketPath} (now with a password)`);
    return { socketPath, password, stop };
  }
  // The password goes in a 0600 file, not on the command line, where every user of the host could read it.
  const conf = join(dir, 'redis.conf');
  await writeFile(conf, `requirepass ${password}\n`, { mode: 0o600 });
  await chmod(conf, 0o600);
  const logFile = await open(join(dir, 'redis.log'), 'a', 0o600);
  let exitReason: string | undefined;
  try {
    const child = spawn(
      'redis-server',
      [
        conf,
        '--port',
        '0',
        '--unixsocket',
        socketPath,
        '--unixsocketperm',
        '700',
        '--dir',
        dir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
        '--daemonize',
        'no',
        '--logfile',
        '',
      ],
      // Its own process group: a Ctrl-C meant for the platform reaches Redis only through stop().
      { stdio: ['ignore', logFile.fd, logFile.fd], detached: true },
    );
    child.once('error', (err) => {
      exitReason =
        (err as NodeJS.ErrnoException).code === 'ENOENT'
          ? 'redis-server is not installed (Debian package redis-server), or give --redis URL'
          : `redis-server could not start: ${err.message}`;
    });
    child.once('exit', (code, signal) => {
      exitReason ??= `redis-server exited (${signal ?? `code ${code}`}); see ${join(dir, 'redis.log')}`;
    });
    child.unref();
    try {
      await waitForPing(socketPath, password, 10_000, () => exitReason);
    } catch (err) {
      child.kill('SIGKILL');
      const tail = (await readFile(join(dir, 'redis.log'), 'utf8').catch(() => '')).trim().split('\n').slice(-3).join(' | ');
      throw new Error(`${(err as Error).message}${tail ? ` (log: ${tail})` : ''}`);
    }
  } finally {
    await logFile.close();
  }
  log(`Redis for the platform's state on ${socketPath} (append-only, fsync always, with a password)`);
  return { socketPath, password, stop };
}

/**
 * A client for the platform's data: commands fail fast instead of queueing forever while Redis is away. `password`
 * (when the URL holds none): the Redis AUTH password, e.g. read from a 0600 file.
 */
export function redisClient(target: ({ socketPath: string } | { url: string }) & { password?: string }): Redis {
  const common = {
    maxRetriesPerRequest: 3,
    retryStrategy: (attempt: number) => Math.min(attempt * 100, 2000),
    ...(target.password ? { password: target.password } : {}),
  };
  return 'url' in target ? new Redis(target.url, common) : new Redis({ path: target.socketPath, ...common });
}
