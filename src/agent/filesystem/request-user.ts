/** The user and resolved path of a filesystem request, with AgentErrors turned into Connect errors. */
import type { HandlerContext } from '@connectrpc/connect';
import type { UserAccount } from '../accounts';
import { requestUser } from '../auth';
import type { AgentServices } from '../call-context';
import { connectErrors } from '../connect-errors';
import { resolveRequestPath } from '../paths';

export function userOf(svc: AgentServices, ctx: HandlerContext): UserAccount {
  return connectErrors(() => requestUser(ctx.requestHeader.get('authorization'), svc.accounts, svc.state.defaultUser));
}

export function pathOf(requested: string, user: UserAccount, field = 'path'): Buffer {
  return connectErrors(() => {
    try {
      return resolveRequestPath(requested, user.home);
    } catch (err) {
      if (err instanceof Error) err.message = err.message.replace('field "path"', `field "${field}"`);
      throw err;
    }
  });
}
