/**
 * The E2B SDK side of the MCP end-to-end test, in a plain Node process (jest cannot load the SDK's ESM
 * dependencies). argv: a JSON request; prints one JSON line: what the SDK returned, or the error it threw.
 */
import { CommandExitError, Sandbox } from 'e2b';

interface Request {
  op: 'create' | 'kill' | 'list' | 'run' | 'pause' | 'snapshot' | 'fork' | 'mcpToken' | 'deleteSnapshot';
  /** op run: a shell command run as root in the sandbox. */
  cmd?: string;
  opts: Record<string, unknown>;
  mcp?: unknown;
  sandboxId?: string;
  /** A template (or snapshot) to create from; absent: the SDK's default for mcp (`mcp-gateway`). */
  template?: string;
  /** op deleteSnapshot. */
  snapshotId?: string;
}

async function main(req: Request): Promise<unknown> {
  if (req.op === 'create') {
    const started = Date.now();
    // Exactly as users write it: no template named, so the SDK picks `mcp-gateway` and starts the gateway in it.
    const options = { ...req.opts, mcp: req.mcp as never };
    const sbx =
      req.template === undefined
        ? await Sandbox.create(options)
        : await Sandbox.create(req.template, req.mcp === undefined ? req.opts : options);
    const readyMs = Date.now() - started;
    return { sandboxId: sbx.sandboxId, mcpUrl: sbx.getMcpUrl(), mcpToken: await sbx.getMcpToken(), readyMs };
  }
  if (req.op === 'list') {
    const items = await Sandbox.list(req.opts).nextItems();
    return items.map((s) => ({ sandboxId: s.sandboxId, templateId: s.templateId, name: s.name }));
  }
  if (req.op === 'run') {
    const sbx = await Sandbox.connect(req.sandboxId as string, req.opts);
    try {
      const r = await sbx.commands.run(req.cmd as string, { user: 'root' });
      return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
    } catch (err) {
      if (err instanceof CommandExitError) return { exitCode: err.exitCode, stdout: err.stdout, stderr: err.stderr };
      throw err;
    }
  }
  if (req.op === 'pause') {
    // To disk: its processes end, its files stay; the next connect starts it again from them.
    const sbx = await Sandbox.connect(req.sandboxId as string, req.opts);
    return sbx.pause({ keepMemory: false });
  }
  if (req.op === 'snapshot') return (await Sandbox.createSnapshot(req.sandboxId as string, req.opts)).snapshotId;
  if (req.op === 'deleteSnapshot') return Sandbox.deleteSnapshot(req.snapshotId as string, req.opts);
  if (req.op === 'fork') {
    const forks = await Sandbox.fork(req.sandboxId as string, { ...req.opts, count: 1 });
    return forks.map((f) => (f instanceof Sandbox ? f.sandboxId : `error: ${f.message}`));
  }
  if (req.op === 'mcpToken') {
    // A sandbox this SDK object did not create (resumed by the connect, a fork, a snapshot's): the SDK reads the file.
    return (await Sandbox.connect(req.sandboxId as string, req.opts)).getMcpToken();
  }
  return Sandbox.kill(req.sandboxId as string, req.opts);
}

main(JSON.parse(process.argv[2]) as Request).then(
  (value) => console.log(JSON.stringify({ ok: true, value })),
  (err: Error) => console.log(JSON.stringify({ ok: false, name: err.constructor?.name ?? err.name, message: err.message })),
);
