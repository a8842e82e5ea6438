import { formatIssues } from '../../config';
import { parseFlags, valueFlag } from '../args';
import { DEFAULT_STACK, loadStack, PASSWORD_ENV, passwordFromEnv, stackName } from '../stack';

const USAGE = `usage: sandbox-kit check-config [--stack NAME]

Validates the sandbox-kit: settings of Pulumi.<stack>.yaml (default stack: ${DEFAULT_STACK}) in the project directory
(the nearest directory holding Pulumi.yaml) and lists every problem at once. Exit 0 when valid, 1 otherwise.
Also says whether the proxy password is available to 'sandbox-kit render' (${PASSWORD_ENV}).`;

export async function run(argv: string[]): Promise<number> {
  const { values, help } = parseFlags('check-config', argv, { stack: valueFlag(stackName().default(DEFAULT_STACK)) });
  if (help) {
    console.log(USAGE);
    return 0;
  }
  const loaded = loadStack(values.stack);
  const env = passwordFromEnv();
  const issues = [...loaded.issues, ...env.issues];
  if (issues.length > 0) {
    console.error(`stack ${loaded.stack} (${loaded.path}): ${formatIssues(issues)}`);
    return 1;
  }
  console.log(`stack ${loaded.stack} (${loaded.path}): config valid`);
  console.log(`proxy password: ${passwordNote(env.password !== undefined, loaded.passwordInStack)}`);
  return 0;
}

function passwordNote(inEnv: boolean, inStack: boolean): string {
  if (inEnv) return `${PASSWORD_ENV} is set and valid (not shown); 'sandbox-kit render' uses it`;
  if (inStack) {
    return `set in the stack (encrypted, for pulumi up); 'sandbox-kit render' cannot decrypt it and needs ${PASSWORD_ENV}`;
  }
  return `not set; set it with 'pulumi config set --secret sandbox-kit:proxyPassword' for pulumi up, and export ${PASSWORD_ENV} for 'sandbox-kit render'`;
}
