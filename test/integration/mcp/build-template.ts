/** Builds the mcp-gateway template with the unmodified E2B SDK (in a plain Node process); prints JSON lines. */
import { buildMcpGatewayTemplate } from '../../../templates/mcp-gateway';

const [apiUrl, apiKey, alias] = process.argv.slice(2);
const emit = (m: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(m)}\n`);
buildMcpGatewayTemplate({ apiUrl, apiKey, alias, onBuildLogs: (e) => emit({ t: 'log', level: e.level, message: e.message }) }).then(
  (info) => emit({ t: 'done', info }),
  (err: Error) => emit({ t: 'error', message: err.message }),
);
