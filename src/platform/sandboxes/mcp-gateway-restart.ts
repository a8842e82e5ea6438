/**
 * The SDK's MCP gateway after a sandbox's processes were started again from its files: a resume from disk, or a
 * sandbox made from a snapshot or a fork. The SDK starts the gateway once, at its create (`mcp-gateway --config`), and
 * no process survives a pause to disk or is copied into a snapshot; the gateway's files are (its config, its token,
 * what it launched). So the platform runs `mcp-gateway restart` as root, as the SDK runs the launch: it starts the
 * gateway that was launched there with the same config and token and waits until its servers are ready. Where none
 * was launched (no restart record, daemon-file.ts) only a shell's `test` runs, not the gateway's node. It runs from
 * the kit's payload, so any template has it. A gateway that cannot be started again is reported in the sandbox's
 * log; the sandbox runs anyway.
 */
import * as path from 'node:path';
import { DAEMON_FILE, DEFAULT_STATE_DIR } from '../../mcp/gateway/daemon-file';
import { GATEWAY_BUNDLE, SANDBOX_KIT_PAYLOAD } from '../../mcp/template/wrapper';
import type { AgentClient, ProcessResult } from './agent-client';

/** Bounds a hang only: the restart itself waits at most 50 s for the servers (the launch's default). */
const RESTART_TIMEOUT_MS = 120_000;

const RESTART = `${SANDBOX_KIT_PAYLOAD}/node ${SANDBOX_KIT_PAYLOAD}/bundle/${GATEWAY_BUNDLE} restart`;

/** What the restart said: undefined when there was nothing to restart. */
export async function restartMcpGateway(agent: AgentClient, token: string): Promise<{ ok: boolean; said: string } | undefined> {
  let result: ProcessResult;
  let output = '';
  const proc = agent.start(token, {
    cmd: '/bin/sh',
    args: ['-c', `test -e ${path.posix.join(DEFAULT_STATE_DIR, DAEMON_FILE)} || exit 0; exec ${RESTART}`],
    user: 'root',
    tag: 'mcp-gateway-restart',
    onOutput: (_stream, text) => {
      output += text;
    },
  });
  const timer = setTimeout(() => proc.abort(), RESTART_TIMEOUT_MS);
  try {
    result = await proc.done;
  } catch (err) {
    return { ok: false, said: (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
  const said = output.trim().replace(/\s+/g, ' ');
  if (result.exitCode === 0 && (said === '' || /nothing to restart/.test(said))) return undefined;
  return { ok: result.exitCode === 0, said: said || result.error || `exit ${result.exitCode}` };
}
