/**
 * What `POST /init` sets and every request reads: the access token, the sandbox's env vars, and the default user and
 * working directory. Start values come from the agent's options.
 */
import type { AgentOptions } from './options';

export class AgentState {
  setAccessToken(token: string): void {
    this.accessToken = token;
  }

  /**
   * The token, or undefined while the sandbox has none: requests present it (auth.ts, a constant-time compare) and
   * signed /files URLs are made from it.
   */
  accessToken: string | undefined;
  envVars: Record<string, string> = {};
  defaultUser: string;
  defaultWorkdir: string | undefined;

  constructor(options: AgentOptions) {
    this.accessToken = options.accessToken;
    this.defaultUser = options.defaultUser;
    this.defaultWorkdir = undefined;
  }
}
