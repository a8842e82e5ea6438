/**
 * Where the egress relay asks for a secret's value at the moment a sandbox's request leaves (docs/secrets.md): an
 * HTTP server on a Unix socket of the platform's state (0600, root's), `GET /resolve?sandbox=ID&name=NAME`. It answers
 * `200` with the value only for a secret of the sandbox's own team that a rule of the sandbox's current rules names;
 * `404` otherwise. Nothing it answers is logged.
 */
import * as fs from 'node:fs';
import { createServer } from 'node:http';
import { placeholderNames } from '../../runtime/network/transform-rules';
import type { SandboxRecord } from '../sandboxes/record';
import { teamOf } from '../teams/model';
import type { SecretService } from './service';

export interface SecretResolverServer {
  close(): Promise<void>;
}

/** The secret names a sandbox's current rules refer to. */
function namesInRules(record: SandboxRecord): Set<string> {
  const names = new Set<string>();
  for (const set of Object.values(record.egress?.rules ?? {}))
    for (const rule of set)
      for (const value of Object.values(rule.transform?.headers ?? {})) for (const n of placeholderNames(value)) names.add(n);
  return names;
}

export async function serveSecretResolver(
  socketPath: string,
  secrets: SecretService,
  sandbox: (sandboxID: string) => Promise<SandboxRecord | undefined>,
  log: (line: string) => void,
): Promise<SecretResolverServer> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://resolver.invalid');
    const sandboxID = url.searchParams.get('sandbox') ?? '';
    const name = url.searchParams.get('name') ?? '';
    const reply = (status: number, body: string) =>
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body);
    if (req.method !== 'GET' || url.pathname !== '/resolve') {
      reply(404, 'no such call');
      return;
    }
    (async () => {
      const record = await sandbox(sandboxID);
      if (!record || !namesInRules(record).has(name)) return reply(404, 'not a secret of this sandbox');
      const value = await secrets.resolve(teamOf(record), name);
      return value === undefined ? reply(404, 'not a secret of this sandbox') : reply(200, value);
    })().catch((err: Error) => {
      log(`secret resolver: ${err.message}`);
      reply(500, 'the platform could not resolve it');
    });
  });
  fs.rmSync(socketPath, { force: true });
  const old = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => resolve());
    });
  } finally {
    process.umask(old);
  }
  fs.chmodSync(socketPath, 0o600);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        fs.rmSync(socketPath, { force: true });
      }),
  };
}
