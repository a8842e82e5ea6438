/**
 * One `@e2b/code-interpreter` release (SDK_PACKAGE, its alias in package.json), unmodified, in a plain Node process
 * configured by the environment alone as its users configure it: a sandbox from its default template, two runCode
 * calls sharing state, kill. Prints one JSON line: {ok, sandboxId, answer, state} or {ok: false, name, message}.
 */
type Execution = { text?: string; error?: { name: string; value: string } };
type CodeSandbox = { sandboxId: string; runCode(code: string): Promise<Execution>; kill(): Promise<unknown> };
const { Sandbox } = require(process.env.SDK_PACKAGE as string) as { Sandbox: { create(opts?: object): Promise<CodeSandbox> } };

async function main(): Promise<Record<string, unknown>> {
  const sbx = await Sandbox.create({ timeoutMs: 300_000 });
  try {
    const answer = await sbx.runCode('x = 21\nx * 2');
    const state = await sbx.runCode('x + 1');
    return { sandboxId: sbx.sandboxId, answer: answer.text ?? answer.error, state: state.text ?? state.error };
  } finally {
    await sbx.kill();
  }
}

main().then(
  (value) => console.log(JSON.stringify({ ok: true, ...value })),
  (err: Error & { cause?: { message?: string } }) =>
    console.log(
      JSON.stringify({
        ok: false,
        name: err.constructor?.name ?? err.name,
        message: `${err.message}${err.cause?.message ? ` (${err.cause.message})` : ''}`,
      }),
    ),
);
