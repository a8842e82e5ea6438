/**
 * A stand-in for the runtime, the sandbox network and the agent, for testing the platform's lifecycle logic before
 * (and besides) the real runtime: every "sandbox" is an HTTP server on its own 127.x.y.z address answering the agent
 * calls the platform makes (/health, /init, process.Process/Start). A paused one answers nothing until resumed, as a
 * frozen sandbox does.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { NetworkAttachment, SandboxNetwork, SandboxRuntime, SandboxSpec, SandboxStatus } from '../../../../src/runtime/types';
import { encodeEnvelope } from '../../../../src/contract/connect-envelope';
import { AdmissionError } from '../../../../src/runtime/admission';

const envelope = (flags: number, message: unknown) => encodeEnvelope(flags, Buffer.from(JSON.stringify(message)));

interface FakeSandbox {
  spec: SandboxSpec;
  state: 'running' | 'paused';
  server: Server;
  token?: string;
  inits: unknown[];
  held: Array<() => void>;
  open: Set<ServerResponse>;
}

function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req
      .on('data', (c: Buffer) => parts.push(c))
      .on('end', () => resolve(Buffer.concat(parts)))
      .on('error', reject);
  });
}

let nextHost = Math.floor(Math.random() * 200) + 2;

export class FakeHost {
  readonly name = 'crun' as const;
  readonly sandboxes = new Map<string, FakeSandbox>();
  readonly attachments = new Map<string, NetworkAttachment>();
  /** Set to make the next create fail the way a runtime would. */
  failCreate?: Error;
  /** Set for a host whose admission refuses every sandbox: the problem its admission names. */
  full?: string;
  /** Network attachments made since the start (removed ones included). */
  attachesMade = 0;
  /** Sandboxes stopped with their "changes" kept (paused to disk): a create with `restart` starts them again. */
  readonly stopped = new Set<string>();
  /** Commands run through Process/Start, in order. */
  readonly commands: string[] = [];
  private readonly subnet = Math.floor(Math.random() * 250) + 2;

  constructor(readonly agentPort: number) {}

  // SandboxNetwork
  async attach(sandboxID: string): Promise<NetworkAttachment> {
    const address = `127.${this.subnet}.${Math.floor(nextHost / 250)}.${(nextHost % 250) + 2}`;
    nextHost++;
    this.attachesMade++;
    const attachment = { netnsPath: `/run/netns/fake-${sandboxID}`, address };
    this.attachments.set(sandboxID, attachment);
    return attachment;
  }

  async detach(sandboxID: string): Promise<void> {
    this.attachments.delete(sandboxID);
  }

  // SandboxRuntime
  async create(spec: SandboxSpec): Promise<SandboxStatus> {
    if (this.full !== undefined) throw new AdmissionError(`cannot create sandbox ${spec.sandboxID}: ${this.full}`);
    if (this.failCreate) {
      const err = this.failCreate;
      this.failCreate = undefined;
      throw err;
    }
    if (spec.restart && !this.stopped.has(spec.sandboxID)) throw new Error(`no stopped sandbox ${spec.sandboxID}`);
    this.stopped.delete(spec.sandboxID);
    const sandbox: FakeSandbox = { spec, state: 'running', server: createServer(), inits: [], held: [], open: new Set() };
    sandbox.server.on('request', (req, res) => {
      const serve = () => void this.serve(sandbox, req, res);
      if (sandbox.state === 'paused') sandbox.held.push(serve);
      else serve();
    });
    await new Promise<void>((resolve, reject) => {
      sandbox.server.once('error', reject);
      sandbox.server.listen(this.agentPort, spec.network.address, () => resolve());
    });
    this.sandboxes.set(spec.sandboxID, sandbox);
    return { sandboxID: spec.sandboxID, state: 'running', pid: 1 };
  }

  async pause(sandboxID: string): Promise<void> {
    const s = this.must(sandboxID);
    s.state = 'paused';
  }

  async resume(sandboxID: string): Promise<void> {
    const s = this.must(sandboxID);
    s.state = 'running';
    for (const serve of s.held.splice(0)) serve();
  }

  async kill(sandboxID: string): Promise<void> {
    this.stopped.delete(sandboxID);
    const s = this.sandboxes.get(sandboxID);
    if (!s) return;
    this.sandboxes.delete(sandboxID);
    for (const res of s.open) res.destroy();
    s.server.closeAllConnections();
    await new Promise<void>((resolve) => s.server.close(() => resolve()));
  }

  async status(sandboxID: string): Promise<SandboxStatus | undefined> {
    const s = this.sandboxes.get(sandboxID);
    return s && { sandboxID, state: s.state, pid: 1 };
  }

  runtimeView(): SandboxRuntime {
    return {
      name: this.name,
      create: (spec) => this.create(spec),
      admissionProblem: () => this.full,
      pause: (id) => this.pause(id),
      resume: (id) => this.resume(id),
      kill: (id) => this.kill(id),
      // The fake has no filesystem: a stopped sandbox's changes are only remembered by ID, and there is nothing to copy.
      stop: async (id) => {
        await this.kill(id);
        this.stopped.add(id);
      },
      hasChanges: (id) => this.stopped.has(id),
      copyChanges: async () => {
        throw new Error('the fake host has no filesystem to copy');
      },
      status: (id) => this.status(id),
      list: async () => [...this.sandboxes.entries()].map(([sandboxID, s]) => ({ sandboxID, state: s.state, pid: 1 })),
    };
  }

  networkView(): SandboxNetwork {
    return {
      attach: (id) => this.attach(id),
      detach: (id) => this.detach(id),
      list: async () => new Map(this.attachments),
    };
  }

  async closeAll(): Promise<void> {
    for (const id of [...this.sandboxes.keys()]) await this.kill(id);
  }

  sandbox(sandboxID: string): FakeSandbox {
    return this.must(sandboxID);
  }

  private must(sandboxID: string): FakeSandbox {
    const s = this.sandboxes.get(sandboxID);
    if (!s) throw new Error(`no container ${sandboxID}`);
    return s;
  }

  private async serve(sandbox: FakeSandbox, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readAll(req);
    if (req.url === '/health') {
      res.writeHead(204).end();
      return;
    }
    if (sandbox.token !== undefined && req.headers['x-access-token'] !== sandbox.token) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'unauthenticated', message: 'bad token' }));
      return;
    }
    if (req.url === '/init') {
      const init = JSON.parse(body.toString()) as { accessToken: string };
      sandbox.inits.push(init);
      sandbox.token = init.accessToken;
      res.writeHead(204).end();
      return;
    }
    if (req.url === '/process.Process/Start') {
      const request = JSON.parse(body.subarray(5).toString()) as { process: { args: string[] } };
      const command = request.process.args.at(-1) as string;
      this.commands.push(command);
      res.writeHead(200, { 'content-type': 'application/connect+json' });
      res.write(envelope(0, { event: { start: { pid: 100 + this.commands.length } } }));
      const exit = /^exit (\d+)$/.exec(command);
      // `false-then-hang` fails the first time and then runs until stopped.
      const first = this.commands.indexOf(command) === this.commands.length - 1;
      // The fake has no files: `test -e FILE || exit 0; ...` (the MCP gateway's restart at a start from disk) exits 0.
      const noFile = /^test -e \S+ \|\| exit 0;/.test(command);
      const code =
        command === 'true' || noFile
          ? 0
          : command === 'false' || (command === 'false-then-hang' && first)
            ? 1
            : exit
              ? Number(exit[1])
              : undefined;
      if (code === undefined) {
        // A long-running start command: the stream stays open.
        sandbox.open.add(res);
        res.on('close', () => sandbox.open.delete(res));
        return;
      }
      res.write(envelope(0, { event: { data: { stderr: Buffer.from(`ran ${command}\n`).toString('base64') } } }));
      res.write(envelope(0, { event: { end: { exitCode: code, exited: true, status: `exit status ${code}` } } }));
      res.end(envelope(2, {}));
      return;
    }
    res.writeHead(404).end();
  }
}
