/**
 * Runs in a plain Node process (jest cannot load the E2B SDK's ESM dependencies): reads one JSON call per line on
 * stdin, makes it with the unmodified SDK, and answers one JSON line per call on stdout. Sandbox objects stay here,
 * named by their sandboxId, so a test can call their methods later.
 */
import { createInterface } from 'node:readline';
import { Sandbox } from 'e2b';

type Call =
  | { id: number; op: 'create'; template: string; opts: Record<string, unknown> }
  | { id: number; op: 'connect'; sandboxId: string; opts: Record<string, unknown> }
  | { id: number; op: 'list'; opts: Record<string, unknown>; pages: number }
  | { id: number; op: 'static'; method: string; args: unknown[] }
  | { id: number; op: 'call'; sandboxId: string; path: string; args: unknown[] };

const sandboxes = new Map<string, Sandbox>();

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
      const paginator = Sandbox.list(call.opts);
      const pages: unknown[] = [];
      for (let i = 0; i < call.pages && (i === 0 || paginator.hasNext); i++) {
        pages.push({ items: await paginator.nextItems(), hasNext: paginator.hasNext });
      }
      return pages;
    }
    case 'static': {
      const fn = (Sandbox as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[call.method];
      return fn.apply(Sandbox, call.args);
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
      (err: Error & { exitCode?: number; stdout?: string; stderr?: string }) =>
        process.stdout.write(
          `${JSON.stringify({ id: call.id, ok: false, error: { name: err.constructor?.name ?? err.name, message: err.message, exitCode: err.exitCode, stdout: err.stdout, stderr: err.stderr } })}\n`,
        ),
    );
  });
