/** `sandbox-kit verify`: checks a deployed proxy host and/or sandbox host over SSH; one PASS/FAIL line per check. */
import { ConfigError, loadStackConfig, type StackConfig } from '../../config';
import { SERVER_OPEN_FILES } from '../../render';
import {
  connectSsh,
  expectationsFor,
  formatResult,
  runChecks,
  runSandboxHostChecks,
  sandboxExpectationsFor,
  type CheckResult,
  type Remote,
} from '../../verify';
import { ipv4, port, text } from '../../config';
import { parseFlags, requiredFlag, UsageError, valueFlag } from '../args';
import { loadStack, stackName } from '../stack';

const USAGE = `usage: sandbox-kit verify [--host HOST] [--sandbox-host HOST [--egress-ip IP] [--check-url URL] [--gateway-url URL]]
                          --ssh-key FILE [--user USER] [--port 22] [--stack NAME]

Connects over SSH (key authentication). For a proxy host (--host) it checks: the sysctls, ss-server running and
listening on the proxy port (TCP and UDP), its open-files limit (${SERVER_OPEN_FILES}), the server config's mode (0600), and the
egress bind address. For a sandbox host (--sandbox-host): its services active, the release bundle intact, the API key
file 0600, the OCI runtime, the proxy template present, and a sandbox created from it that reaches the internet
through the proxy (seen from --egress-ip). Commands run as root: directly when USER is root, else through 'sudo -n'.

  --host          address of the proxy host (the stack output sshHost)
  --sandbox-host  address of the sandbox host (the stack output sandboxHost)
  --egress-ip     the address a sandbox must be seen from (the stack output egressIp)
  --check-url     a what-is-my-IP URL over plain HTTP (default http://checkip.amazonaws.com/)
  --gateway-url   where the probe reaches its sandbox (default the host's own gateway); a fleet host (a stack with
                  fleet.hosts above 1) runs none: give the fleet's, the stack output sandboxUrl
  --ssh-key       private key file for USER
  --user          login user (default: the stack's host.sshUser, else admin)
  --port          SSH port (default 22)
  --stack         read the expected ports, modes, template and egress mode from Pulumi.<stack>.yaml of the
                  project (the nearest directory holding Pulumi.yaml); without it, the defaults, and the egress
                  check accepts whichever mode the host runs

Exit status: 0 when every check passes, 1 otherwise.`;

const OPTIONS = {
  host: valueFlag(text(/^\S+$/, 'a host name or address').optional()),
  'sandbox-host': valueFlag(text(/^\S+$/, 'a host name or address').optional()),
  'egress-ip': valueFlag(ipv4().optional()),
  'check-url': valueFlag(text(/^http:\/\/[^\s/]+/, 'a plain http:// URL such as http://checkip.amazonaws.com/').optional()),
  'gateway-url': valueFlag(text(/^https?:\/\/[^\s/]+\/?$/, 'the gateway URL, such as https://sandbox.example.com').optional()),
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
  // A host to check is a usage error like any other flag's: reported together with the rest.
  const named = (flag: string) => argv.some((a) => a === flag || a.startsWith(`${flag}=`));
  const hostIssue = { key: '--host or --sandbox-host', given: '(missing)', expected: 'the proxy host and/or the sandbox host to check' };
  let parsed: ReturnType<typeof parseFlags<typeof OPTIONS>>;
  try {
    parsed = parseFlags('verify', argv, OPTIONS);
  } catch (err) {
    if (err instanceof UsageError && !named('--host') && !named('--sandbox-host'))
      throw new UsageError('verify', [hostIssue, ...err.issues]);
    throw err;
  }
  const { values, help } = parsed;
  if (help) {
    console.log(USAGE);
    return 0;
  }
  if (!values.host && !values['sandbox-host']) throw new UsageError('verify', [hostIssue]);
  const port = values.port;
  const config = stackConfig(values.stack);
  const username = values.user ?? config.host.sshUser;
  const targets: Array<{ host: string; what: string; check: (remote: Remote) => Promise<CheckResult[]> }> = [];
  if (values.host) {
    const expected = expectationsFor(config, { egressModeKnown: values.stack !== undefined });
    targets.push({ host: values.host, what: 'proxy host', check: (remote) => runChecks(remote, expected) });
  }
  if (values['sandbox-host']) {
    const extra = { egressIp: values['egress-ip'], checkUrl: values['check-url'], gatewayUrl: values['gateway-url'] };
    if (config.fleet.hosts > 1 && extra.gatewayUrl === undefined)
      throw new UsageError('verify', [
        {
          key: '--gateway-url',
          given: '(missing)',
          expected: `the fleet's gateway, the stack output sandboxUrl (stack ${values.stack}: fleet.hosts ${config.fleet.hosts}, a fleet host runs no gateway)`,
        },
      ]);
    const expected = sandboxExpectationsFor(config, extra);
    targets.push({ host: values['sandbox-host'], what: 'sandbox host', check: (remote) => runSandboxHostChecks(remote, expected) });
  }

  let failed = 0;
  let total = 0;
  for (const target of targets) {
    console.log(
      `verifying ${target.what} ${username}@${target.host}:${port}${values.stack ? ` against stack ${values.stack}` : ' against the default config'}`,
    );
    const remote = await connectSsh({ host: target.host, port, username, privateKeyPath: values['ssh-key'] });
    try {
      const results = await target.check(remote);
      for (const result of results) console.log(formatResult(result));
      failed += results.filter((r) => !r.ok).length;
      total += results.length;
    } finally {
      remote.close();
    }
  }
  console.log(failed === 0 ? `all ${total} checks passed` : `${failed} of ${total} checks failed`);
  return failed === 0 ? 0 : 1;
}
