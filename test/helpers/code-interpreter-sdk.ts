/**
 * The unmodified `@e2b/code-interpreter` against a kit system (in a plain Node process: jest cannot load the SDK's
 * ESM dependencies); test/e2e/templates/sdk-templates.test.ts asserts what it prints. argv: JSON {apiKey, apiUrl, sandboxUrl}. Creates a sandbox from the default template, runs
 * every check and prints one JSON line per check: {check, ...what was observed}; {done} last, or {failed, message}.
 */
import { Sandbox } from '@e2b/code-interpreter';

type Opts = { apiKey: string; apiUrl: string; sandboxUrl: string };
const opts = JSON.parse(process.argv[2] ?? '{}') as Opts;
const emit = (m: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(m)}\n`);

async function thrown(p: Promise<unknown>): Promise<{ name: string; message: string } | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    return { name: (err as Error).constructor?.name ?? (err as Error).name, message: (err as Error).message };
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  const sbx = await Sandbox.create({ ...opts, timeoutMs: 600_000 });
  try {
    const first = await sbx.runCode('x = 21\nx * 2');
    emit({ check: 'answer', text: first.text, createToFirstResultMs: Date.now() - started, sandboxId: sbx.sandboxId });
    emit({ check: 'state', text: (await sbx.runCode('x + 1')).text });

    const order: string[] = [];
    await sbx.runCode(
      'import sys\nfor i in range(3):\n    print(f"out{i}", flush=True)\n    print(f"err{i}", file=sys.stderr, flush=True)',
      {
        onStdout: (m) => {
          order.push(`stdout:${m.line.trim()}`);
        },
        onStderr: (m) => {
          order.push(`stderr:${m.line.trim()}`);
        },
      },
    );
    emit({ check: 'streams', order });

    const failing = await sbx.runCode('def f():\n    return 1 / 0\nf()');
    emit({ check: 'exception', error: failing.error && { ...failing.error } });

    const plot = await sbx.runCode('import matplotlib.pyplot as plt\nplt.plot([1, 4, 9])\nplt.title("squares")\nplt.show()');
    emit({
      check: 'plot',
      results: plot.results.map((r) => ({ formats: r.formats(), png: r.png?.slice(0, 12), svg: r.svg?.slice(0, 200) })),
      error: plot.error?.value,
    });

    const frame = await sbx.runCode('import pandas as pd\npd.DataFrame({"name": ["a", "b"], "score": [1.5, 2.5]})');
    emit({ check: 'dataframe', html: frame.results[0]?.html, text: frame.text, error: frame.error?.value });

    const json = await sbx.runCode('from IPython.display import JSON\nJSON({"k": [1, 2]})');
    emit({ check: 'json', json: json.results[0]?.json });

    const js = await sbx.createCodeContext({ language: 'js' });
    const js1 = await sbx.runCode('const a = 20; a + 22', { context: js });
    const js2 = await sbx.runCode('console.log("from js", a); a * 2', { context: js });
    const jsDirect = await sbx.runCode('[1, 2, 3].map((n) => n * 2)', { language: 'javascript' });
    emit({ check: 'javascript', context: js, first: js1.text, second: js2.text, logs: js2.logs.stdout, direct: jsDirect.text });

    const bash = await sbx.createCodeContext({ language: 'bash', cwd: '/tmp' });
    const b1 = await sbx.runCode('pwd\nexport KEPT=yes', { context: bash });
    const b2 = await sbx.runCode('echo "kept=$KEPT"', { context: bash });
    emit({ check: 'bash', context: bash, first: b1.logs.stdout.join(''), second: b2.logs.stdout.join('') });

    const withEnv = await sbx.runCode('import os\nos.environ["GREETING"]', { envs: { GREETING: 'hello' } });
    const withoutEnv = await sbx.runCode('repr(os.environ.get("GREETING"))');
    const bashEnv = await sbx.runCode('echo "[$GREETING]"', { context: bash, envs: { GREETING: 'bash-hello' } });
    emit({ check: 'envs', with: withEnv.text, without: withoutEnv.text, bash: bashEnv.logs.stdout.join('') });

    const loopStarted = Date.now();
    const timeout = await thrown(sbx.runCode('while True:\n    pass', { timeoutMs: 2_000 }));
    const afterTimeout = await sbx.runCode('x');
    emit({
      check: 'timeout',
      thrown: timeout,
      tookMs: Date.now() - loopStarted,
      after: afterTimeout.text,
      error: afterTimeout.error?.name,
    });

    const killed = await sbx.runCode('import os, signal\nos.kill(os.getpid(), signal.SIGKILL)');
    const afterKill = await sbx.runCode('1 + 1');
    const stateAfterKill = await sbx.runCode('x');
    emit({
      check: 'killed',
      error: killed.error?.name,
      value: killed.error?.value,
      after: afterKill.text,
      state: stateAfterKill.error?.name,
    });

    const ctx = await sbx.createCodeContext();
    await sbx.runCode('kept = 1', { context: ctx });
    await sbx.restartCodeContext(ctx);
    const afterRestart = await sbx.runCode('kept', { context: ctx });
    const listed = await sbx.listCodeContexts();
    await sbx.removeCodeContext(ctx);
    const listedAfter = await sbx.listCodeContexts();
    const removedRun = await thrown(sbx.runCode('1', { context: ctx }));
    emit({
      check: 'contexts',
      afterRestart: afterRestart.error?.name,
      listed: listed.map((c) => c.id).includes(ctx.id),
      listedAfter: listedAfter.map((c) => c.id).includes(ctx.id),
      removedRun,
    });

    const badLanguage = await thrown(sbx.runCode('1', { language: 'cobol' }));
    const badContextLanguage = await thrown(sbx.createCodeContext({ language: 'cobol' }));
    const unknownContext = await thrown(sbx.runCode('1', { context: { id: 'no-such-context', language: 'python', cwd: '/' } }));
    const { envdAccessToken } = (await (
      await fetch(`${opts.apiUrl}/sandboxes/${sbx.sandboxId}`, { headers: { 'x-api-key': opts.apiKey } })
    ).json()) as { envdAccessToken: string };
    const route = { 'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': '49999', 'Content-Type': 'application/json' };
    const invalid = await fetch(`${opts.sandboxUrl}/execute`, {
      method: 'POST',
      headers: { ...route, 'X-Access-Token': envdAccessToken },
      body: '{"code": ',
    });
    const stillWorks = await sbx.runCode('x = 2\nx');
    emit({
      check: 'bad-input',
      badLanguage,
      badContextLanguage,
      unknownContext,
      invalidJson: { status: invalid.status, body: await invalid.text() },
      stillWorks: stillWorks.text,
    });
  } finally {
    await sbx.kill();
  }

  // A sandbox whose ports are not public: the SDK sends its traffic token; a caller without it is refused.
  const closed = await Sandbox.create({ ...opts, network: { allowPublicTraffic: false } });
  try {
    const answer = await closed.runCode('6 * 7');
    const contexts = await closed.listCodeContexts();
    const route = { 'E2b-Sandbox-Id': closed.sandboxId, 'E2b-Sandbox-Port': '49999', 'Content-Type': 'application/json' };
    const stranger = await fetch(`${opts.sandboxUrl}/execute`, { method: 'POST', headers: route, body: '{"code":"1"}' });
    emit({ check: 'private-ports', answer: answer.text, contexts: contexts.length, stranger: stranger.status });
  } finally {
    await closed.kill();
  }
  emit({ done: true });
}

main().catch((err: Error) => emit({ failed: true, message: err.stack ?? err.message }));
