/**
 * What `up` checks through the gateway before it says "up", as a client would do it: a command runs in a sandbox and a
 * ListDir answers, both with the sandbox's token, and a wrong token is refused. Plain Connect clients, no SDK.
 */
import { request } from 'node:http';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { Process } from '../contract/gen/process_pb';
import { brandNames } from '../contract/brand';

export interface SandboxTarget {
  gatewayUrl: string;
  brand: string;
  sandboxID: string;
  agentPort: number;
  token: string;
}

/**
 * A platform sandbox of the local system through its gateway, with the E2B SDK's header names whatever the stack's
 * brand: what the SDK sends must work out of the box.
 */
export function sandboxTarget(gatewayUrl: string, sandbox: { sandboxID: string; agentPort: number }, token: string): SandboxTarget {
  return { gatewayUrl, brand: 'E2b', sandboxID: sandbox.sandboxID, agentPort: sandbox.agentPort, token };
}

function headersFor(t: SandboxTarget, token = t.token): Record<string, string> {
  const names = brandNames(t.brand);
  return { [names.sandboxIdHeader]: t.sandboxID, [names.sandboxPortHeader]: String(t.agentPort), 'x-access-token': token };
}

/** One unary Connect call with JSON; resolves to the status and the parsed body. */
export function unaryCall(t: SandboxTarget, path: string, body: unknown, token?: string): Promise<{ status: number; body: unknown }> {
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = request(
      `${t.gatewayUrl}${path}`,
      {
        method: 'POST',
        timeout: 10_000,
        headers: {
          ...headersFor(t, token),
          'content-type': 'application/json',
          'connect-protocol-version': '1',
          'content-length': String(payload.length),
        },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: kept as text for the message
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${path} through ${t.gatewayUrl}: no answer within 10 s`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** Runs `sh -c script` in the sandbox through the gateway; resolves to its stdout and exit code. */
export async function runCommand(t: SandboxTarget, script: string): Promise<{ stdout: string; exitCode: number }> {
  let stdout = '';
  const exitCode = await streamCommand(t, script, (chunk) => (stdout += chunk));
  return { stdout, exitCode };
}

/** Runs `sh -c script` in the sandbox, handing its stdout over as it arrives; resolves to the exit code. */
export async function streamCommand(
  t: SandboxTarget,
  script: string,
  onStdout: (chunk: string) => void,
  timeoutMs = 20_000,
): Promise<number> {
  const transport = createConnectTransport({
    baseUrl: t.gatewayUrl,
    httpVersion: '1.1',
    useBinaryFormat: false,
    interceptors: [
      (next) => (req) => {
        for (const [k, v] of Object.entries(headersFor(t))) req.header.set(k, v);
        return next(req);
      },
    ],
  });
  const client = createClient(Process, transport);
  let exitCode = -1;
  for await (const response of client.start({ process: { cmd: '/bin/sh', args: ['-c', script] } }, { timeoutMs })) {
    const event = response.event?.event;
    if (event?.case === 'data' && event.value.output.case === 'stdout') onStdout(Buffer.from(event.value.output.value).toString('utf8'));
    if (event?.case === 'end') exitCode = event.value.exitCode;
  }
  return exitCode;
}

export interface GatewayCheck {
  command: string;
  listDir: string;
  wrongToken: string;
  ok: boolean;
}

/** The three checks for one sandbox; each result says what was seen. */
export async function checkThroughGateway(t: SandboxTarget): Promise<GatewayCheck> {
  const describe = (err: unknown) => `error: ${(err as Error).message}`;
  const command = await runCommand(t, 'echo sandbox-kit-ok')
    .then((r) =>
      r.exitCode === 0 && r.stdout.trim() === 'sandbox-kit-ok' ? 'ok' : `exit ${r.exitCode}, output ${JSON.stringify(r.stdout)}`,
    )
    .catch(describe);
  const listDir = await unaryCall(t, '/filesystem.Filesystem/ListDir', { path: '/', depth: 1 })
    .then((r) =>
      r.status === 200 && Array.isArray((r.body as { entries?: unknown[] }).entries)
        ? `ok (${(r.body as { entries: unknown[] }).entries.length} entries in /)`
        : `HTTP ${r.status}: ${JSON.stringify(r.body)}`,
    )
    .catch(describe);
  const wrongToken = await unaryCall(t, '/filesystem.Filesystem/ListDir', { path: '/', depth: 1 }, `${t.token}x`)
    .then((r) => (r.status === 401 ? 'refused (401)' : `NOT refused: HTTP ${r.status}`))
    .catch(describe);
  return { command, listDir, wrongToken, ok: command === 'ok' && listDir.startsWith('ok') && wrongToken === 'refused (401)' };
}
