/**
 * Runs in a plain Node process (jest cannot load the E2B SDK's ESM dependencies): reads one JSON call per line on
 * stdin, makes it with the unmodified SDK, and answers one JSON line per call on stdout. Sandbox objects stay here,
 * named by their sandboxId, so a test can call their methods later. SDK_PACKAGE names the SDK: `e2b` (the newest)
 * by default, or an older line installed under its alias (e.g. `e2b-2-45`), loaded unmodified either way.
 */
import { createInterface } from 'node:readline';
import type * as E2b from 'e2b';

type Sandbox = E2b.Sandbox;
// Older lines differ in shape (1.x lists into an array, 2.10 pauses with betaPause): callers name what they call.
const { Sandbox, Secret, Template, Volume, waitForFile } = require(process.env.SDK_PACKAGE ?? 'e2b') as typeof E2b;

type Call =
  | { id: number; op: 'create'; template: string; opts: Record<string, unknown> }
  | { id: number; op: 'connect'; sandboxId: string; opts: Record<string, unknown> }
  | { id: number; op: 'list'; method?: 'list' | 'listSnapshots'; opts: Record<string, unknown>; pages: number }
  | { id: number; op: 'fork'; sandboxId: string; opts: Record<string, unknown> }
  | { id: number; op: 'static'; method: string; args: unknown[] }
  | { id: number; op: 'call'; sandboxId: string; path: string; args: unknown[] }
  | { id: number; op: 'volume'; method: string; args: unknown[] }
  | { id: number; op: 'volume-call'; volumeId: string; method: string; args: unknown[] }
  | { id: number; op: 'secret'; method: string; args: unknown[] }
  | { id: number; op: 'secret-list'; opts: Record<string, unknown>; pages: number }
  | { id: number; op: 'build'; alias: string; runCmd: string; user?: string; opts: Record<string, unknown> }
  | { id: number; op: 'template'; method: string; args: unknown[] }
  | { id: number; op: 'build-start'; name: string; run: string; startCmd: string; opts: Record<string, unknown> }
  | {
      id: number;
      op: 'build-steps';
      name: string;
      from: { image: string };
      steps: BuildStep[];
      contextDir?: string;
      opts: Record<string, unknown>;
    };

/** One step of a 'build-steps' template: a RUN, or a COPY of `src` (in the context directory) to `dest`. */
type BuildStep = { run: string } | { copy: { src: string; dest: string } };

const sandboxes = new Map<string, Sandbox>();
const volumes = new Map<string, E2b.Volume>();

async function handle(call: Call): Promise<unknown> {
  switch (call.op) {
    case 'create': {
      const sbx = await Sandbox.create(call.template, call.opts);
      sandboxes.set(sbx.sandboxId, sbx);
      return { sandboxId: sbx.sandboxId, trafficAccessToken: sbx.trafficAccessToken ?? null };
    }
    case 'connect': {
      const sbx = await Sandbox.connect(call.sandboxId, call.opts);
      sandboxes.set(sbx.sandboxId, sbx);
      return { sandboxId: sbx.sandboxId };
    }
    case 'list': {
      const listed = (call.method === 'listSnapshots' ? Sandbox.listSnapshots(call.opts) : Sandbox.list(call.opts)) as unknown;
      // 1.x: a promise of every running sandbox; 2.x: a paginator.
      if (listed instanceof Promise) return [{ items: await listed, hasNext: false }];
      const paginator = listed as ReturnType<typeof Sandbox.list>;
      const pages: unknown[] = [];
      for (let i = 0; i < call.pages && (i === 0 || paginator.hasNext); i++) {
        pages.push({ items: await paginator.nextItems(), hasNext: paginator.hasNext });
      }
      return pages;
    }
    case 'fork': {
      const sbx = sandboxes.get(call.sandboxId);
      if (!sbx) throw new Error(`the driver holds no sandbox ${call.sandboxId}`);
      return (await sbx.fork(call.opts)).map((fork) => {
        if (fork instanceof Error) return { error: `${fork.constructor.name}: ${fork.message}` };
        sandboxes.set(fork.sandboxId, fork);
        return { sandboxId: fork.sandboxId };
      });
    }
    case 'static': {
      const fn = (Sandbox as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[call.method];
      return fn.apply(Sandbox, call.args);
    }
    case 'build': {
      const template = Template()
        .fromDebianImage('bookworm')
        .runCmd(call.runCmd, call.user ? { user: call.user } : undefined);
      const info = await Template.build(template, { alias: call.alias, cpuCount: 1, memoryMB: 512, ...call.opts } as never);
      return { templateId: (info as { templateId: string }).templateId };
    }
    case 'template': {
      const fn = (Template as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[call.method];
      return fn.apply(Template, call.args);
    }
    case 'build-start': {
      // A Debian template with one RUN step and a start command that is ready once it touched /tmp/started.
      const t = Template().fromDebianImage('bookworm').runCmd(call.run).setStartCmd(call.startCmd, waitForFile('/tmp/started'));
      return Template.build(t, call.name, call.opts);
    }
    case 'build-steps': {
      // From an image (Debian's, or a registry's), with RUN and COPY steps in order.
      let t = Template(call.contextDir ? { fileContextPath: call.contextDir } : undefined).fromImage(call.from.image);
      for (const step of call.steps) t = 'run' in step ? t.runCmd(step.run) : t.copy(step.copy.src, step.copy.dest);
      return Template.build(t, call.name, { cpuCount: 1, memoryMB: 512, ...call.opts } as never);
    }
    case 'volume': {
      // Volume.create and Volume.connect give an instance: held here by its ID for 'volume-call'.
      const fn = (Volume as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[call.method];
      const value = await fn.apply(Volume, call.args);
      if (value instanceof Volume) {
        volumes.set(value.volumeId, value);
        return { volumeId: value.volumeId, name: value.name };
      }
      return value;
    }
    case 'secret': {
      const fn = (Secret as unknown as Record<string, (...a: unknown[]) => unknown>)[call.method];
      return fn.apply(Secret, call.args);
    }
    case 'secret-list': {
      const paginator = Secret.list(call.opts);
      const pages: unknown[] = [];
      for (let i = 0; i < call.pages && paginator.hasNext; i++)
        pages.push({ items: await paginator.nextItems(), hasNext: paginator.hasNext });
      return pages;
    }
    case 'volume-call': {
      const vol = volumes.get(call.volumeId);
      if (!vol) throw new Error(`the driver holds no volume ${call.volumeId}`);
      const fn = (vol as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[call.method];
      return fn.apply(vol, call.args);
    }
    case 'call': {
      const sbx = sandboxes.get(call.sandboxId);
      if (!sbx) throw new Error(`the driver holds no sandbox ${call.sandboxId}`);
      const parts = call.path.split('.');
      let target: Record<string, unknown> = sbx as unknown as Record<string, unknown>;
      for (const part of parts.slice(0, -1)) target = target[part] as Record<string, unknown>;
      const fn = target[parts.at(-1) as string] as (...a: unknown[]) => Promise<unknown>;
      return fn.apply(target, call.args);
    }
  }
}

createInterface({ input: process.stdin })
  .on('close', () => process.exit(0))
  .on('line', (line) => {
    const call = JSON.parse(line) as Call;
    handle(call).then(
      (value) => process.stdout.write(`${JSON.stringify({ id: call.id, ok: true, value: value ?? null })}\n`),
      (err: Error & { exitCode?: number; stdout?: string; stderr?: string; cause?: { message?: string } }) =>
        process.stdout.write(
          `${JSON.stringify({ id: call.id, ok: false, error: { name: err.constructor?.name ?? err.name, message: err.cause?.message ? `${err.message} (${err.cause.message})` : err.message, exitCode: err.exitCode, stdout: err.stdout, stderr: err.stderr } })}\n`,
        ),
    );
  });
