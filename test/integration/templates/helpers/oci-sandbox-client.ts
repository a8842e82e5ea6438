/**
 * A user's whole path with the unmodified E2B SDK, run in a plain Node process (see node-script.ts): builds a
 * template from an image (`fromImage`, with registry credentials when given; `fromBaseImage`; `fromAWSRegistry`) or
 * a Dockerfile, with a start command when given, then creates a sandbox from it by name, writes a file, runs commands,
 * reads the file back, and kills it. Prints the build's log lines, then the build's result or error, then what the sandbox
 * showed, each as one JSON line.
 */
import { Sandbox, Template, waitForFile } from 'e2b';

type From =
  | { image: string; credentials?: { username: string; password: string } }
  | { dockerfile: string }
  | { baseImage: true }
  | { aws: string; credentials: { accessKeyId: string; secretAccessKey: string; region: string } };

interface Input {
  apiUrl: string;
  apiKey: string;
  sandboxUrl: string;
  name: string;
  from: From;
  start?: { cmd: string; readyFile: string };
  commands?: string[];
  /** Written with files.write before the commands, read back with files.read after them. */
  file?: { path: string; content: string };
}

const input = JSON.parse(process.argv[2]!) as Input;
const emit = (m: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(m)}\n`);
const opts = { apiKey: input.apiKey, apiUrl: input.apiUrl };

function template() {
  const t = Template();
  const f = input.from;
  if ('dockerfile' in f) return t.fromDockerfile(f.dockerfile);
  if ('baseImage' in f) return t.fromBaseImage();
  if ('aws' in f) return t.fromAWSRegistry(f.aws, f.credentials);
  return t.fromImage(f.image, f.credentials);
}

async function main(): Promise<void> {
  try {
    const t = template();
    const final = input.start ? t.setStartCmd(input.start.cmd, waitForFile(input.start.readyFile)) : t;
    const info = await Template.build(final, input.name, {
      ...opts,
      cpuCount: 1,
      memoryMB: 512,
      onBuildLogs: (e) => emit({ t: 'log', level: e.level, message: e.message }),
    });
    emit({ t: 'built', info });
  } catch (err) {
    emit({ t: 'error', name: (err as Error).name, message: (err as Error).message });
    return;
  }
  const sbx = await Sandbox.create(input.name, { ...opts, sandboxUrl: input.sandboxUrl, timeoutMs: 120_000 });
  try {
    if (input.file) await sbx.files.write(input.file.path, input.file.content);
    const commands: Array<{ exitCode: number; stdout: string; stderr: string }> = [];
    for (const cmd of input.commands ?? []) {
      const r = await sbx.commands
        .run(cmd, { timeoutMs: 60_000 })
        .catch((err: { exitCode?: number; stdout?: string; stderr?: string; message: string }) => ({
          exitCode: err.exitCode ?? -1,
          stdout: err.stdout ?? '',
          stderr: err.stderr ?? err.message,
        }));
      commands.push({ exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr });
    }
    const read = input.file ? await sbx.files.read(input.file.path) : undefined;
    emit({ t: 'sandbox', sandboxId: sbx.sandboxId, templateId: (await sbx.getInfo()).templateId, commands, read });
  } finally {
    await sbx.kill();
  }
}

main().catch((err: Error) => emit({ t: 'error', name: err.name, message: err.message }));
