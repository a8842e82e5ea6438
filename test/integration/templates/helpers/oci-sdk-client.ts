/**
 * The SDK side of the image tests, run in a plain Node process (see node-script.ts): builds a template with the
 * unmodified E2B SDK from an image (`fromImage`, with registry credentials when given) or from a Dockerfile, and
 * reports its log lines and the result or the error.
 */
import { Template } from 'e2b';

interface Input {
  apiUrl: string;
  apiKey: string;
  name: string;
  from: { image: string; credentials?: { username: string; password: string } } | { dockerfile: string };
  run?: string;
}

const input = JSON.parse(process.argv[2]!) as Input;
const emit = (m: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(m)}\n`);

async function main(): Promise<void> {
  try {
    const base = Template();
    const from =
      'dockerfile' in input.from ? base.fromDockerfile(input.from.dockerfile) : base.fromImage(input.from.image, input.from.credentials);
    const template = input.run ? from.runCmd(input.run) : from;
    const info = await Template.build(template, input.name, {
      cpuCount: 1,
      memoryMB: 512,
      apiKey: input.apiKey,
      apiUrl: input.apiUrl,
      onBuildLogs: (e) => emit({ t: 'log', level: e.level, message: e.message }),
    });
    emit({ t: 'done', info });
  } catch (err) {
    emit({ t: 'error', name: (err as Error).name, message: (err as Error).message });
  }
}

void main();
