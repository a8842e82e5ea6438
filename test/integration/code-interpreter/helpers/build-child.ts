/**
 * Builds the code-interpreter-v1 template with the unmodified E2B SDK (in a plain Node process); prints JSON lines.
 * argv: apiUrl apiKey. The host's trust store goes along as the local system's builds take it.
 */
import * as fs from 'node:fs';
import { buildCodeInterpreterTemplate } from '../../../../templates/code-interpreter/template';

const [apiUrl, apiKey] = process.argv.slice(2);
const emit = (m: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(m)}\n`);
const store = '/etc/ssl/certs/ca-certificates.crt';
const started = Date.now();
buildCodeInterpreterTemplate(
  { apiUrl, apiKey, onBuildLogs: (e) => emit({ t: 'log', message: e.message }) },
  { extraCaCertsFile: fs.existsSync(store) ? store : undefined },
).then(
  (info) => emit({ t: 'done', info, ms: Date.now() - started }),
  (err: Error) => emit({ t: 'error', message: err.message }),
);
