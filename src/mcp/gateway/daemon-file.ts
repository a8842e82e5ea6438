/**
 * The launched gateway's restart record, `<state dir>/daemon.json` (0600): how to start its daemon again. The
 * launcher writes it; the daemon's orderly stop (SIGTERM, SIGINT) and a failed launch remove it. A daemon ended
 * otherwise (a pause to disk ends every process with SIGKILL, a snapshot copies no process; the files stay) leaves
 * it, and `mcp-gateway restart` starts the daemon again from it (the platform runs that: mcp-gateway-restart.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The gateway's private dir for its config, log and per-server dirs (--state-dir). */
export const DEFAULT_STATE_DIR = '/run/mcp-gateway';
export const DAEMON_FILE = 'daemon.json';

export interface DaemonFile {
  /** The daemon's argv after the command (`serve --config-file ...`). */
  args: string[];
  port: number;
  tokenFile: string;
}

export function writeDaemonFile(stateDir: string, daemon: DaemonFile): void {
  fs.writeFileSync(path.join(stateDir, DAEMON_FILE), JSON.stringify(daemon), { mode: 0o600 });
}

/** undefined when no gateway was launched with this state dir (or it was stopped on purpose). */
export function readDaemonFile(stateDir: string): DaemonFile | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(stateDir, DAEMON_FILE), 'utf8')) as DaemonFile;
  } catch {
    return undefined;
  }
}

export function removeDaemonFile(stateDir: string): void {
  fs.rmSync(path.join(stateDir, DAEMON_FILE), { force: true });
}
