/**
 * `POST /init`: the platform configures a fresh (or resumed) sandbox's agent: its access token, env vars, default
 * user and default working directory. Once a token is set, every /init must present it in X-Access-Token, so a
 * caller without the current token can neither replace it nor change anything else. Fields the agent has no use
 * for (timestamps, mounts, addresses the platform may send) are accepted and ignored.
 *
 * `GET /envs`: the sandbox env vars /init set, as a JSON object.
 */
import { ACCESS_TOKEN_PATTERN, ACCESS_TOKEN_RULE } from '../contract/access-token';
import type { Accounts } from './accounts';
import { AgentError } from './errors';
import type { AgentState } from './state';
import { Code } from '../contract/connect-codes';

interface InitBody {
  accessToken?: string;
  envVars?: Record<string, string>;
  defaultUser?: string;
  defaultWorkdir?: string;
}

/** The fields /init uses, each checked (null or absent: unchanged); every problem at once. */
function readInitBody(body: Record<string, unknown>): InitBody {
  const problems: string[] = [];
  const init: InitBody = {};
  const text = (name: keyof InitBody, rule: (s: string) => string | undefined): string | undefined => {
    const value = body[name];
    if (value === undefined || value === null) return undefined;
    const problem = typeof value !== 'string' ? 'expected a string' : rule(value);
    if (problem) problems.push(`field ${JSON.stringify(name)}: ${problem}`);
    return problem ? undefined : (value as string);
  };
  init.accessToken = text('accessToken', (s) => (ACCESS_TOKEN_PATTERN.test(s) ? undefined : `expected ${ACCESS_TOKEN_RULE}`));
  init.defaultUser = text('defaultUser', (s) => (s === '' ? 'expected a user name' : undefined));
  init.defaultWorkdir = text('defaultWorkdir', (s) => (s.startsWith('/') ? undefined : 'expected an absolute path'));
  const envVars = body.envVars;
  if (envVars !== undefined && envVars !== null) {
    if (typeof envVars !== 'object' || Array.isArray(envVars)) problems.push('field "envVars": expected an object of strings');
    else {
      for (const [name, value] of Object.entries(envVars))
        if (typeof value !== 'string') problems.push(`field ${JSON.stringify(`envVars.${name}`)}: expected string values`);
      init.envVars = envVars as Record<string, string>;
    }
  }
  if (problems.length > 0) {
    throw new AgentError(
      Code.InvalidArgument,
      `invalid /init body: ${problems.join('; ')} (fields: accessToken, envVars, defaultUser, defaultWorkdir)`,
    );
  }
  return init;
}

export function applyInit(state: AgentState, accounts: Accounts, body: unknown): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new AgentError(Code.InvalidArgument, '/init body must be a JSON object');
  const init = readInitBody(body as Record<string, unknown>);
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
