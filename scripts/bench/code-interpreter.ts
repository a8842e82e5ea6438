/**
 * Code-interpreter benchmark, on the real platform with the kit's gateway in front. The unmodified
 * `@e2b/code-interpreter` times `runCode('1+1')` round trips through the gateway to the kit's server and its Python
 * kernel; the floor is the same kernel driven directly inside the same sandbox by Jupyter's own client
 * (`jupyter_client`, execute and wait for idle, as the server's bridge does), in the same run. Also: create -> first
 * `runCode` result, the template's size (its layers above the base) and its cold and cached build times through the
 * SDK's `Template.build`.
 *
 *   node dist/scripts/bench/code-interpreter.js [--calls 300] [--creates 3] [--json FILE]
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { Sandbox } from '@e2b/code-interpreter';
import { buildCodeInterpreterTemplate } from '../../templates/code-interpreter/template';
import { startGateway } from '../../src/gateway';
import { startPlatformOnHost } from '../../src/platform/on-host';

function log(msg: string): void {
  process.stderr.write(`code-interpreter-bench: ${msg}\n`);
}

function summarize(samples: number[]): { calls: number; p50Ms: number; p99Ms: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { calls: sorted.length, p50Ms: +at(0.5).toFixed(3), p99Ms: +at(0.99).toFixed(3) };
}

/**
 * Run inside the sandbox: the python kernel's connection file (from its command line, `-f FILE`), N executes of 1+1,
 * each until the kernel is idle again.
 */
const FLOOR = `
import glob, json, sys, time
from jupyter_client import BlockingKernelClient
def connection_file():
    for path in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            argv = open(path, "rb").read().decode().split("\\0")
        except OSError:
            continue
        if "ipykernel_launcher" in argv and "-f" in argv:
            return argv[argv.index("-f") + 1]
    raise SystemExit("no python kernel runs")
kc = BlockingKernelClient(connection_file=connection_file()); kc.load_connection_file(); kc.start_channels(); kc.wait_for_ready(30)
def once():
    msg_id = kc.execute("1+1")
    while True:
        m = kc.get_iopub_msg(timeout=10)
        if m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
            return
for _ in range(20): once()
out = []
for _ in range(int(sys.argv[1])):
    t = time.perf_counter(); once(); out.append((time.perf_counter() - t) * 1000)
print(json.dumps(out))
`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { calls: { type: 'string', default: '300' }, creates: { type: 'string', default: '3' }, json: { type: 'string' } },
  });
  const calls = Number(values.calls);
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-ci-bench-'));
  const platform = await startPlatformOnHost({ stateDir });
  const gateway = await startGateway({ catalog: platform.catalog });
  const opts = { apiKey: platform.apiKey, apiUrl: platform.url, sandboxUrl: `http://127.0.0.1:${gateway.port}` };
  try {
    const store = '/etc/ssl/certs/ca-certificates.crt';
    const extraCaCertsFile = fs.existsSync(store) ? store : undefined;
    let started = Date.now();
    await buildCodeInterpreterTemplate(opts, { extraCaCertsFile });
    const coldMs = Date.now() - started;
    log(`cold build ${coldMs} ms`);
    started = Date.now();
    await buildCodeInterpreterTemplate(opts, { extraCaCertsFile });
    const cachedMs = Date.now() - started;
    log(`cached build ${cachedMs} ms`);
    const layersDir = path.join(stateDir, 'templates', 'layers');
    const sizeMB = Number(execFileSync('du', ['-sm', layersDir]).toString().split('\t')[0]);

    const firstResult: number[] = [];
    for (let i = 0; i < Number(values.creates); i++) {
      started = Date.now();
      const sbx = await Sandbox.create({ ...opts, timeoutMs: 600_000 });
      await sbx.runCode('1+1');
      firstResult.push(Date.now() - started);
      await sbx.kill();
    }
    log(`create -> first runCode: ${firstResult.join(', ')} ms`);

    const sbx = await Sandbox.create({ ...opts, timeoutMs: 600_000 });
    try {
      for (let i = 0; i < 20; i++) await sbx.runCode('1+1');
      const ours: number[] = [];
      for (let i = 0; i < calls; i++) {
        const t = process.hrtime.bigint();
        const execution = await sbx.runCode('1+1');
        ours.push(Number(process.hrtime.bigint() - t) / 1e6);
        if (execution.text !== '2') throw new Error(`runCode('1+1') gave ${execution.text}`);
      }
      await sbx.files.write('/tmp/floor.py', FLOOR);
      const floorRun = await sbx.commands
        .run(`python3 /tmp/floor.py ${calls}`, { timeoutMs: 300_000 })
        .catch((err: Error & { stderr?: string }) => {
          throw new Error(`the floor failed: ${err.stderr ?? err.message}`);
        });
      const floor = JSON.parse(floorRun.stdout) as number[];
      const throughGateway = summarize(ours);
      const direct = summarize(floor);
      const report = {
        roundTrip: {
          throughGateway,
          kernelDirect: direct,
          p50Ratio: +(throughGateway.p50Ms / direct.p50Ms).toFixed(2),
          p99Ratio: +(throughGateway.p99Ms / direct.p99Ms).toFixed(2),
          goal: 'p50 <= 1.5x the kernel driven directly',
        },
        createToFirstResultMs: { runs: firstResult, median: [...firstResult].sort((a, b) => a - b)[Math.floor(firstResult.length / 2)] },
        template: { sizeMB, coldBuildMs: coldMs, cachedBuildMs: cachedMs },
      };
      console.log(JSON.stringify(report, null, 2));
      if (values.json) fs.writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`);
    } finally {
      await sbx.kill();
    }
  } finally {
    await gateway.close();
    await platform.close({ killSandboxes: true });
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}

main().catch((err: Error) => {
  console.error(`code-interpreter-bench: ${err.stack ?? err.message}`);
  process.exitCode = 1;
});
