/**
 * What `POST /init` sets and every request reads: the access token (kept only as its digest), the sandbox's env
 * vars, and the default user and working directory. Start values come from the agent's options.
 */
import { hashAccessToken } from '../contract/access-token';
import type { AgentOptions } from './options';

export class AgentState {
  setAccessToken(token: string): void {
    this.accessToken = token;
    this.tokenHash = hashAccessToken(token);
  }

  /** sha256 hex of the access token, or undefined while the sandbox has none. */
  tokenHash: string | undefined;
  /** The token itself, only to verify signed /files URLs (their signature is made from it). */
  accessToken: string | undefined;
  envVars: Record<string, string> = {};
  defaultUser: string;
  defaultWorkdir: string | undefined;

  constructor(options: AgentOptions) {
    this.accessToken = options.accessToken;
    this.tokenHash = options.accessToken === undefined ? undefined : hashAccessToken(options.accessToken);
    this.defaultUser = options.defaultUser;
    this.defaultWorkdir = undefined;
  }
}
