/**
 * Runs in a plain Node process (see node-script.ts): creates a sandbox from a template with the unmodified E2B SDK,
 * runs commands in it through the SDK's process service, reads files through its filesystem service, kills it, and
 * prints one JSON line with what it saw.
 */
import { Sandbox } from 'e2b';

interface Input {
  apiUrl: string;
  apiKey: string;
  sandboxUrl: string;
  template: string;
  commands: string[];
  files?: string[];
}

const input = JSON.parse(process.argv[2]!) as Input;

async function main(): Promise<void> {
  const opts = { apiUrl: input.apiUrl, apiKey: input.apiKey, sandboxUrl: input.sandboxUrl };
  const sbx = await Sandbox.create(input.template, { ...opts, timeoutMs: 120_000 });
  try {
    const commands: Array<{ cmd: string; exitCode: number; stdout: string; stderr: string }> = [];
    for (const cmd of input.commands) {
      const r = await sbx.commands
        .run(cmd, { timeoutMs: 60_000 })
        .catch((err: { exitCode?: number; stdout?: string; stderr?: string; message: string }) => ({
          exitCode: err.exitCode ?? -1,
          stdout: err.stdout ?? '',
          stderr: err.stderr ?? err.message,
        }));
      commands.push({ cmd, exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr });
    }
    const files: Record<string, string> = {};
    for (const path of input.files ?? []) files[path] = await sbx.files.read(path);
    process.stdout.write(`${JSON.stringify({ t: 'done', sandboxId: sbx.sandboxId, commands, files })}\n`);
  } finally {
    await sbx.kill();
  }
}

main().catch((err: Error) => process.stdout.write(`${JSON.stringify({ t: 'error', name: err.name, message: err.message })}\n`));
