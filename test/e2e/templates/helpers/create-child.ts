/**
 * One create with the unmodified E2B SDK (in a plain Node process), as a user right after `up` would run it.
 * argv: JSON {opts, template}. Creates from the template, runs one command in the sandbox, kills it; prints one JSON
 * line: {ok, stdout} or {ok: false, name, message} with the error the SDK threw.
 */
import { Sandbox } from 'e2b';

const { opts, template, command } = JSON.parse(process.argv[2] ?? '{}') as {
  opts: Record<string, string>;
  template: string;
  command: string;
};

async function main(): Promise<{ stdout: string; createMs: number }> {
  const started = Date.now();
  const sbx = await Sandbox.create(template, opts);
  const createMs = Date.now() - started;
  try {
    return { stdout: (await sbx.commands.run(command)).stdout, createMs };
  } finally {
    await sbx.kill();
  }
}

main().then(
  (value) => console.log(JSON.stringify({ ok: true, ...value })),
  (err: Error) => console.log(JSON.stringify({ ok: false, name: err.constructor?.name ?? err.name, message: err.message })),
);
