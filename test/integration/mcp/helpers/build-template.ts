/**
 * Builds the mcp-gateway template with the unmodified E2B SDK (in a plain Node process); prints JSON lines. When
 * this host trusts extra certificates (NODE_EXTRA_CA_CERTS: a TLS-inspecting proxy), the template trusts them too.
 */
import * as fs from 'node:fs';
import { buildMcpGatewayTemplate } from '../../../../templates/mcp-gateway';

const [apiUrl, apiKey, alias] = process.argv.slice(2);
const emit = (m: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(m)}\n`);
// The host's trust store (with any TLS-inspecting proxy's CA) when no extra file is named.
const extra = process.env.NODE_EXTRA_CA_CERTS ?? '/etc/ssl/certs/ca-certificates.crt';
const extraCaCertsFile = extra && fs.existsSync(extra) ? extra : undefined;
buildMcpGatewayTemplate(
  { apiUrl, apiKey, alias, onBuildLogs: (e) => emit({ t: 'log', level: e.level, message: e.message }) },
  { extraCaCertsFile },
).then(
  (info) => emit({ t: 'done', info }),
  (err: Error) => emit({ t: 'error', message: err.message }),
);
