/**
 * Drives the unmodified E2B SDK from a jest test: the SDK runs in a child Node process (sdk-child.ts, bundled with
 * esbuild, packages left to Node), and each call is one JSON line there and back.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { bundleForNode } from '../../../helpers/node-bundle';

const ROOT = join(__dirname, '..', '..', '..', '..');

export class SdkCallError extends Error {
  constructor(
    readonly sdkName: string,
    message: string,
    readonly detail: { exitCode?: number; stdout?: string; stderr?: string },
  ) {
    super(`${sdkName}: ${message}`);
  }
}

export class SdkDriver {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private stderr = '';

  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
  ) {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const reply = JSON.parse(line) as {
        id: number;
        ok: boolean;
        value?: unknown;
        error?: { name: string; message: string; exitCode?: number; stdout?: string; stderr?: string };
      };
      const waiter = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (!waiter) return;
      if (reply.ok) waiter.resolve(reply.value);
      else waiter.reject(new SdkCallError(reply.error?.name ?? 'Error', reply.error?.message ?? '', reply.error ?? {}));
    });
    child.stderr?.on('data', (d: Buffer) => {
      this.stderr = (this.stderr + d.toString()).slice(-4000);
    });
    child.once('exit', (code) => {
      for (const waiter of this.pending.values()) waiter.reject(new Error(`the SDK process exited (${code}): ${this.stderr}`));
      this.pending.clear();
    });
  }

  /** `sdkPackage`: the newest SDK (`e2b`) or an older line by its alias in package.json, e.g. `e2b-2-45`. */
  static async start(env: Record<string, string> = {}, sdkPackage = 'e2b'): Promise<SdkDriver> {
    const dir = await mkdtemp(join(tmpdir(), 'sk-sdk-'));
    const outfile = join(dir, 'sdk-child.js');
    bundleForNode(join(__dirname, 'sdk-child.ts'), outfile);
    const child = spawn(process.execPath, [outfile], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules'), SDK_PACKAGE: sdkPackage, ...env },
    });
    return new SdkDriver(child, dir);
  }

  private send(call: Record<string, unknown>): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.stdin?.write(`${JSON.stringify({ ...call, id })}\n`);
    });
  }

  create(template: string, opts: Record<string, unknown>): Promise<{ sandboxId: string; trafficAccessToken: string | null }> {
    return this.send({ op: 'create', template, opts }) as Promise<{ sandboxId: string; trafficAccessToken: string | null }>;
  }

  connect(sandboxId: string, opts: Record<string, unknown>): Promise<{ sandboxId: string }> {
    return this.send({ op: 'connect', sandboxId, opts }) as Promise<{ sandboxId: string }>;
  }

  list(
    opts: Record<string, unknown>,
    pages = 1,
    method: 'list' | 'listSnapshots' = 'list',
  ): Promise<Array<{ items: Array<Record<string, unknown>>; hasNext: boolean }>> {
    return this.send({ op: 'list', method, opts, pages }) as Promise<Array<{ items: Array<Record<string, unknown>>; hasNext: boolean }>>;
  }

  /** sandbox.fork(opts): the new sandboxes are held here too; a fork that failed is its error's text. */
  fork(sandboxId: string, opts: Record<string, unknown>): Promise<Array<{ sandboxId?: string; error?: string }>> {
    return this.send({ op: 'fork', sandboxId, opts }) as Promise<Array<{ sandboxId?: string; error?: string }>>;
  }

  /** Template.build of Debian with one RUN step, named `alias`. */
  /** A Debian template with one RUN step (as `user`, else the SDK's default). */
  build(alias: string, runCmd: string, opts: Record<string, unknown>, user?: string): Promise<{ templateId: string }> {
    return this.send({ op: 'build', alias, runCmd, opts, ...(user ? { user } : {}) }) as Promise<{ templateId: string }>;
  }

  /** A static method of Sandbox, e.g. ('kill', id, opts). */
  static<T = unknown>(method: string, ...args: unknown[]): Promise<T> {
    return this.send({ op: 'static', method, args }) as Promise<T>;
  }

  /** A static method of Template, e.g. ('assignTags', 'name:v1', ['prod'], opts). */
  template<T = unknown>(method: string, ...args: unknown[]): Promise<T> {
    return this.send({ op: 'template', method, args }) as Promise<T>;
  }

  /** Template.build of Debian with one RUN step and a start command (ready once it touched /tmp/started), as `name`. */
  buildWithStart(
    name: string,
    run: string,
    startCmd: string,
    opts: Record<string, unknown>,
  ): Promise<{ templateId: string; buildId: string }> {
    return this.send({ op: 'build-start', name, run, startCmd, opts }) as Promise<{ templateId: string; buildId: string }>;
  }

  /** Template.build from an image with RUN and COPY steps (COPY sources under `contextDir`), as `name`. */
  buildSteps(
    name: string,
    from: { image: string },
    steps: Array<{ run: string } | { copy: { src: string; dest: string } }>,
    opts: Record<string, unknown>,
    contextDir?: string,
  ): Promise<{ templateId: string; buildId: string }> {
    return this.send({ op: 'build-steps', name, from, steps, contextDir, opts }) as Promise<{ templateId: string; buildId: string }>;
  }

  /** A static method of Volume, e.g. ('create', 'data', opts); a Volume it gives is held here by its volumeId. */
  volume<T = unknown>(method: string, ...args: unknown[]): Promise<T> {
    return this.send({ op: 'volume', method, args }) as Promise<T>;
  }

  /** A static method of Secret, e.g. ('create', 'name', 'value', opts), or ('fill', 'name'). */
  secret<T = unknown>(method: string, ...args: unknown[]): Promise<T> {
    return this.send({ op: 'secret', method, args }) as Promise<T>;
  }

  /** Secret.list(opts), drained page by page (at most `pages`). */
  secretList(opts: Record<string, unknown>, pages = 10): Promise<Array<{ items: Array<Record<string, unknown>>; hasNext: boolean }>> {
    return this.send({ op: 'secret-list', opts, pages }) as Promise<Array<{ items: Array<Record<string, unknown>>; hasNext: boolean }>>;
  }

  /** A method of a Volume this driver holds, e.g. (volumeId, 'readFile', '/a.txt'). */
  volumeCall<T = unknown>(volumeId: string, method: string, ...args: unknown[]): Promise<T> {
    return this.send({ op: 'volume-call', volumeId, method, args }) as Promise<T>;
  }

  /** A method of a sandbox object this driver holds, e.g. (id, 'files.list', '/'). */
  call<T = unknown>(sandboxId: string, path: string, ...args: unknown[]): Promise<T> {
    return this.send({ op: 'call', sandboxId, path, args }) as Promise<T>;
  }

  async close(): Promise<void> {
    this.child.stdin?.end();
    if (this.child.exitCode === null) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => this.child.kill('SIGKILL'), 2000);
        this.child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}
