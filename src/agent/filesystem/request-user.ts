/** The user and resolved path of a filesystem request. */
import type { HandlerContext } from '@connectrpc/connect';
import type { UserAccount } from '../accounts';
import { requestUser } from '../auth';
import type { AgentServices } from '../call-context';
import { AgentError } from '../errors';
import { resolveRequestPath } from '../paths';

export function userOf(svc: AgentServices, ctx: HandlerContext): UserAccount {
  return requestUser(ctx.requestHeader.get('authorization'), svc.accounts, svc.state.defaultUser);
}

export function pathOf(requested: string, user: UserAccount, field = 'path'): Buffer {
  try {
    return resolveRequestPath(requested, user.home);
  } catch (err) {
    if (err instanceof AgentError) throw new AgentError(err.code, err.rawMessage.replace('field "path"', `field "${field}"`));
    throw err;
  }
}
