import { resolve } from 'node:path';
import { cidr, formatIssues, ipv4, text } from '../../config';
import { renderArtifacts } from '../../render';
import { listFlag, parseFlags, requiredFlag, valueFlag } from '../args';
import { DEFAULT_STACK, loadStack, PASSWORD_ENV, requiredPasswordFromEnv, stackName } from '../stack';
import { writeArtifacts } from '../write-artifacts';

const USAGE = `usage: sandbox-kit render [--stack NAME] --out DIR --server-ip IP [--egress-bind IP] [--host-network CIDR]...

Writes every proxy artifact of a stack (default stack: ${DEFAULT_STACK}) to DIR: ss-server and client configs, the NAT-chain
script, the sysctl file, the server ACL, the systemd unit, cloud-init user-data and the client start scripts.

  --out DIR            output directory; created 0700 if new; only sandbox-kit's own file names are overwritten
  --server-ip IP       the proxy's public (ingress) address that clients dial; required, because the client configs
                       and the NAT chain's bypass rule contain it
  --egress-bind IP     private address ss-server binds outbound connections to (dedicated egress); adds
                       egress-address.sh and the unit's ExecStartPre
  --host-network CIDR  a network of the proxy host the proxy must refuse to reach (repeatable), e.g. the VPC CIDR

The proxy password comes from ${PASSWORD_ENV} (a stack secret is encrypted; only pulumi up can decrypt it).
It is never printed; files holding it are written 0600.`;

export async function run(argv: string[]): Promise<number> {
  const { values, help } = parseFlags('render', argv, {
    stack: valueFlag(stackName().default(DEFAULT_STACK)),
    out: requiredFlag(text(/.+/, 'a directory'), 'the directory to write the artifacts to'),
    'server-ip': requiredFlag(ipv4(), "the proxy's public IPv4 address that clients dial, such as 203.0.113.10"),
    'egress-bind': valueFlag(ipv4().optional()),
    'host-network': listFlag(cidr()),
  });
  if (help) {
    console.log(USAGE);
    return 0;
  }
  const serverIp = values['server-ip'];
  const egressBind = values['egress-bind'];

  const loaded = loadStack(values.stack);
  const env = requiredPasswordFromEnv();

  const issues = [...loaded.issues, ...env.issues];
  if (issues.length > 0 || !loaded.config || env.password === undefined) {
    console.error(`render: stack ${loaded.stack} (${loaded.path}): ${formatIssues(issues)}\nNothing was written.`);
    return 1;
  }

  const artifacts = renderArtifacts(loaded.config, {
    serverIp,
    password: env.password,
    egressBindAddress: egressBind,
    hostNetworks: values['host-network'],
  });
  const out = resolve(values.out);
  writeArtifacts(out, artifacts);
  console.log(`render: stack ${loaded.stack} -> ${out}`);
  for (const a of artifacts) {
    console.log(`  ${a.name.padEnd(28)} ${a.mode.toString(8).padStart(4, '0')}${a.secret ? '  holds the proxy password' : ''}`);
  }
  return 0;
}
