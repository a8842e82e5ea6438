/**
 * The SDK side of the template tests, run in a plain Node process (see node-script.ts): builds one of the test definitions
 * with the unmodified E2B SDK and reports every log line as it arrives, with the build's status at that moment when
 * asked, then the build result.
 */
import { Template } from 'e2b';
import { DEFINITIONS, type DefinitionName } from './definitions';

interface Input {
  apiUrl: string;
  apiKey: string;
  alias: string;
  context: string;
  definition: DefinitionName;
  /** Ask the status endpoint when the first line matching this arrives. */
  probeOn?: string;
  skipCache?: boolean;
}

const input = JSON.parse(process.argv[2]!) as Input;
const emit = (m: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(m)}\n`);

async function main(): Promise<void> {
  let ids: { templateID: string; buildID: string } | undefined;
  let probed = false;
  const probes: Array<Promise<void>> = [];
  try {
    const info = await Template.build(DEFINITIONS[input.definition](input.context), {
      alias: input.alias,
      cpuCount: 1,
      memoryMB: 1024,
      apiKey: input.apiKey,
      apiUrl: input.apiUrl,
      skipCache: input.skipCache,
      onBuildLogs: (e) => {
        emit({ t: 'log', level: e.level, message: e.message });
        const m = /Template created with ID: ([^,\s]+), Build ID: (\S+)/.exec(e.message);
        if (m) ids = { templateID: m[1]!, buildID: m[2]! };
        if (!probed && ids && input.probeOn && new RegExp(input.probeOn).test(e.message)) {
          probed = true;
          const { templateID, buildID } = ids;
          probes.push(
            fetch(`${input.apiUrl}/templates/${templateID}/builds/${buildID}/status?logsOffset=0`, {
              headers: { 'X-API-Key': input.apiKey },
            })
              .then((r) => r.json() as Promise<{ status: string }>)
              .then((s) => {
                emit({ t: 'probe', message: e.message, status: s.status });
              }),
          );
        }
      },
    });
    await Promise.all(probes);
    emit({ t: 'done', info });
  } catch (err) {
    await Promise.allSettled(probes);
    emit({ t: 'error', name: (err as Error).name, message: (err as Error).message });
  }
}

void main();
