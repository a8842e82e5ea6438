/**
 * The two request credentials: the sandbox access token (X-Access-Token, compared in constant time by the
 * contract's checkHeldAccessToken) and the sandbox user (HTTP Basic, username only; the default user when absent).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { checkHeldAccessToken } from '../contract/access-token';
import type { Accounts, UserAccount } from './accounts';
import { AgentError } from './errors';
import { Code } from '../contract/connect-codes';

export function checkAccessToken(headers: IncomingHttpHeaders, token: string | undefined): void {
  if (token === undefined) return;
  const verdict = checkHeldAccessToken(headers['x-access-token'], token);
  if (verdict !== 'ok') throw new AgentError(Code.Unauthenticated, TOKEN_MESSAGES[verdict]);
}

export const TOKEN_MESSAGES = {
  missing: 'missing X-Access-Token header: this sandbox requires its access token',
  malformed: 'X-Access-Token is not a well-formed access token (one header of visible ASCII characters)',
  mismatch: "X-Access-Token does not match this sandbox's access token",
} as const;

/** The user named by `Authorization: Basic base64(user:)`, or the default user when the header is absent. */
export function requestUser(authorization: string | undefined | null, accounts: Accounts, defaultUser: string): UserAccount {
  const name = authorization === undefined || authorization === null ? defaultUser : basicUsername(authorization);
  return userNamed(name, accounts, authorization === undefined || authorization === null ? 'the default user' : 'Authorization');
}

/** The account of `name`; `source` says where the name came from, for the error. */
export function userNamed(name: string, accounts: Accounts, source: string): UserAccount {
  accounts.refresh();
  const user = accounts.user(name);
  if (!user) {
    throw new AgentError(
      Code.Unauthenticated,
      `${source} names the user ${JSON.stringify(name)}, who does not exist in this sandbox (/etc/passwd)`,
    );
  }
  return user;
}

function basicUsername(header: string): string {
  const m = /^Basic\s+([A-Za-z0-9+/=_-]*)\s*$/i.exec(header);
  if (!m) throw new AgentError(Code.Unauthenticated, 'Authorization must be "Basic <base64 of user:>" naming the sandbox user');
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  // The password is empty; anything after the colon is ignored.
  const name = colon === -1 ? decoded : decoded.slice(0, colon);
  if (name === '') throw new AgentError(Code.Unauthenticated, 'Authorization: Basic credentials name no user (expected "user:")');
  return name;
}
