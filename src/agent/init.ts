/**
 * `POST /init`: the platform configures a fresh (or resumed) sandbox's agent: its access token, env vars, default
 * user and default working directory. Once a token is set, every /init must present it in X-Access-Token, so a
 * caller without the current token can neither replace it nor change anything else. Fields the agent has no use
 * for (timestamps, mounts, addresses the platform may send) are accepted and ignored.
 *
 * `GET /envs`: the sandbox env vars /init set, as a JSON object.
 */
import { z } from 'zod';
import { ACCESS_TOKEN_PATTERN, ACCESS_TOKEN_RULE } from '../contract/access-token';
import type { Accounts } from './accounts';
import { AgentError } from './errors';
import type { AgentState } from './state';
import { Code } from '@connectrpc/connect';

const initBody = z.looseObject({
  accessToken: z.string({ error: 'expected a string' }).regex(ACCESS_TOKEN_PATTERN, `expected ${ACCESS_TOKEN_RULE}`).nullish(),
  envVars: z.record(z.string(), z.string({ error: 'expected string values' }), { error: 'expected an object of strings' }).nullish(),
  defaultUser: z.string({ error: 'expected a string' }).min(1, 'expected a user name').nullish(),
  defaultWorkdir: z.string({ error: 'expected a string' }).startsWith('/', 'expected an absolute path').nullish(),
});

export function applyInit(state: AgentState, accounts: Accounts, body: unknown): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new AgentError(Code.InvalidArgument, '/init body must be a JSON object');
  const parsed = initBody.safeParse(body);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `field ${JSON.stringify(i.path.join('.'))}: ${i.message}`);
    throw new AgentError(
      Code.InvalidArgument,
      `invalid /init body: ${problems.join('; ')} (fields: accessToken, envVars, defaultUser, defaultWorkdir)`,
    );
  }
  const init = parsed.data;
  if (init.defaultUser) {
    accounts.refresh();
    if (!accounts.user(init.defaultUser)) {
      throw new AgentError(
        Code.InvalidArgument,
        `field "defaultUser": the user ${JSON.stringify(init.defaultUser)} does not exist in this sandbox (/etc/passwd)`,
      );
    }
  }
  // Everything validated: apply all at once, so a refused /init changes nothing.
  if (init.accessToken) state.setAccessToken(init.accessToken);
  if (init.envVars) state.envVars = { ...init.envVars };
  if (init.defaultUser) state.defaultUser = init.defaultUser;
  if (init.defaultWorkdir) state.defaultWorkdir = init.defaultWorkdir;
}
