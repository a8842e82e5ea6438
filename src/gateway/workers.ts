import cluster, { type Worker } from 'node:cluster';

export interface GatewayWorkers {
  host: string;
  port: number;
  /** Process IDs of the workers running now. */
  pids(): number[];
  /** SIGTERM to every worker (each finishes its requests in flight), then waits for all to exit. */
  stop(): Promise<void>;
}

/** How long a worker may take to finish after SIGTERM before it is killed. */
const STOP_GRACE_MS = 4000;

/**
 * The primary side of a multi-process gateway: forks `count` copies of this very command (node:cluster), each of
 * which runs a whole gateway on its own catalog connection, all on one listening port (the primary hands out the
 * accepted connections in turn). One Node process spends most of each request in its HTTP server and client, so a
 * second process on a second core is what lifts the ceiling; the catalog is shared through its file or Redis.
 * A worker that dies is replaced; resolves once every worker listens, or rejects when one exits before that.
 */
export function startGatewayWorkers(count: number, log: (line: string) => void): Promise<GatewayWorkers> {
  const workers = new Set<Worker>();
  let stopping = false;
  let ready = false;
  return new Promise((resolve, reject) => {
    let listening = 0;
    let address: { host: string; port: number } | undefined;
    const fork = () => {
      const worker = cluster.fork();
      workers.add(worker);
      worker.once('listening', (where) => {
        address ??= { host: where.address ?? '0.0.0.0', port: where.port };
        if (ready) {
          log(`worker ${worker.process.pid} replaced one that exited`);
          return;
        }
        listening++;
        if (listening === count) {
          ready = true;
          resolve(api(address));
        }
      });
      worker.once('exit', (code, signal) => {
        workers.delete(worker);
        if (stopping) return;
        if (!ready) {
          stopping = true;
          for (const w of workers) w.process.kill('SIGKILL');
          reject(new Error(`a gateway worker exited with ${signal ?? code} before listening`));
          return;
        }
        log(`worker ${worker.process.pid} exited with ${signal ?? code}; starting another`);
        fork();
      });
    };
    const api = (where: { host: string; port: number }): GatewayWorkers => ({
      ...where,
      pids: () => [...workers].map((w) => w.process.pid as number),
      stop: async () => {
        stopping = true;
        const exits = [...workers].map(
          (w) =>
            new Promise<void>((done) => {
              if (w.isDead()) return done();
              const kill = setTimeout(() => w.process.kill('SIGKILL'), STOP_GRACE_MS);
              w.once('exit', () => {
                clearTimeout(kill);
                done();
              });
              w.process.kill('SIGTERM');
            }),
        );
        await Promise.all(exits);
      },
    });
    for (let i = 0; i < count; i++) fork();
  });
}

/** True in a process forked by startGatewayWorkers: it runs one gateway and leaves announcing to the primary. */
export function isGatewayWorker(): boolean {
  return cluster.isWorker;
}

/** In a worker, after its gateway closed: drop the channel to the primary, the last thing keeping the process alive. */
export function leaveWorkerPool(): void {
  if (!cluster.isWorker) return;
  cluster.worker?.disconnect();
  // Everything is closed by now; a handle left open somewhere must not keep a stopped worker around.
  setTimeout(() => process.exit(0), 1000).unref();
}
