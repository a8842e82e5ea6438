/**
 * The two request credentials of spec section 5: the sandbox access token (X-Access-Token) and the sandbox user
 * (HTTP Basic, username only). The token compare is constant-time over SHA-256 digests, so neither the token's
 * content nor its length leaks through timing.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Accounts, UserAccount } from './accounts';
import { AgentError } from './errors';

export function checkAccessToken(headers: IncomingHttpHeaders, accessToken: string | undefined): void {
  if (accessToken === undefined) return;
  const given = headers['x-access-token'];
  if (typeof given !== 'string' || given === '') {
    throw new AgentError('unauthenticated', 'missing X-Access-Token header: this sandbox requires its access token');
  }
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(accessToken).digest();
  if (!timingSafeEqual(a, b)) throw new AgentError('unauthenticated', 'X-Access-Token does not match this sandbox\'s access token');
}

/** The user named by `Authorization: Basic base64(user:)`, or the default user when the header is absent. */
export function requestUser(headers: IncomingHttpHeaders, accounts: Accounts, defaultUser: string): UserAccount {
  const auth = headers.authorization;
  const name = auth === undefined ? defaultUser : basicUsername(auth);
  accounts.refresh();
  const user = accounts.user(name);
  if (!user) {
    throw new AgentError(
      'unauthenticated',
      auth === undefined
        ? `the default user ${JSON.stringify(name)} does not exist in /etc/passwd`
        : `Authorization names the user ${JSON.stringify(name)}, who does not exist in this sandbox`,
    );
  }
  return user;
}

function basicUsername(header: string): string {
  const m = /^Basic\s+([A-Za-z0-9+/=_-]*)\s*$/i.exec(header);
  if (!m) throw new AgentError('unauthenticated', 'Authorization must be "Basic <base64 of user:>" naming the sandbox user');
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  // The password is empty by the spec; anything after the colon is ignored.
  const name = colon === -1 ? decoded : decoded.slice(0, colon);
  if (name === '') throw new AgentError('unauthenticated', 'Authorization: Basic credentials name no user (expected "user:")');
  return name;
}
