/** `sandbox-kit verify`: checks a deployed proxy host over SSH and prints one PASS/FAIL line per check. */
import { ConfigError, loadStackConfig, type StackConfig } from '../../config';
import { SERVER_OPEN_FILES } from '../../render';
import { connectSsh, expectationsFor, formatResult, runChecks } from '../../verify';
import { port, text } from '../../config';
import { parseFlags, requiredFlag, valueFlag } from '../args';
import { loadStack, stackName } from '../stack';

const USAGE = `usage: sandbox-kit verify --host HOST --ssh-key FILE [--user USER] [--port 22] [--stack NAME]

Connects to a proxy host over SSH (key authentication) and checks: the sysctls, ss-server running and listening on the
proxy port (TCP and UDP), its open-files limit (${SERVER_OPEN_FILES}), the server config's mode (0600), and the egress bind address.
Commands run as root: directly when USER is root, else through 'sudo -n'.

  --host       address of the proxy host (the stack output sshHost)
  --ssh-key    private key file for USER
  --user       login user (default: the stack's host.sshUser, else admin)
  --port       SSH port (default 22)
  --stack      read the expected port, modes and egress mode from Pulumi.<stack>.yaml of the project
               (the nearest directory holding Pulumi.yaml); without it, the defaults, and the egress
               check accepts whichever mode the host runs

Exit status: 0 when every check passes, 1 otherwise.`;

const OPTIONS = {
  host: requiredFlag(text(/^\S+$/, 'a host name or address'), 'the address of the proxy host (the stack output sshHost)'),
  'ssh-key': requiredFlag(text(/.+/, 'a file path'), 'the private key file for the SSH user'),
  user: valueFlag(text(/^[a-z_][a-z0-9_-]*$/, 'a Unix user name').optional()),
  port: valueFlag(port().default(22)),
  stack: valueFlag(stackName().optional()),
};

function stackConfig(stack: string | undefined): StackConfig {
  if (stack === undefined) return loadStackConfig({});
  const loaded = loadStack(stack);
  if (!loaded.config) throw new ConfigError(loaded.issues);
  return loaded.config;
}

export async function run(argv: string[]): Promise<number> {
  const { values, help } = parseFlags('verify', argv, OPTIONS);
  if (help) {
    console.log(USAGE);
    return 0;
  }
  const port = values.port;
  const config = stackConfig(values.stack);
  const expected = expectationsFor(config, { egressModeKnown: values.stack !== undefined });
  const username = values.user ?? config.host.sshUser;
  const host = values.host;

  console.log(`verifying ${username}@${host}:${port}${values.stack ? ` against stack ${values.stack}` : ' against the default config'}`);
  const remote = await connectSsh({ host, port, username, privateKeyPath: values['ssh-key'] });
  try {
    const results = await runChecks(remote, expected);
    for (const result of results) console.log(formatResult(result));
    const failed = results.filter((r) => !r.ok).length;
    console.log(failed === 0 ? `all ${results.length} checks passed` : `${failed} of ${results.length} checks failed`);
    return failed === 0 ? 0 : 1;
  } finally {
    remote.close();
  }
}
