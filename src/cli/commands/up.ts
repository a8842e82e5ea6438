import { existsSync } from 'node:fs';
import { formatIssues, loadStackConfig, stackFilePath, type StackConfig } from '../../config';
import { startLocalSystem, type LocalSystem } from '../../local/local-system';
import { integer } from '../../config';
import { parseFlags, valueFlag } from '../args';
import { labModeFlag, labNameFlag, sandboxCountFlag } from '../lab-flags';
import { stackName } from '../stack';
import { DEFAULT_STACK, findProjectDir, loadStack } from '../stack';

const HELP = `usage: sandbox-kit up [--mode local|transparent] [--sandboxes N] [--gateway-port P] [--stack NAME] [--name NAME]

Brings the whole system up on this machine (root, Debian): the proxy host, the internet and the sandboxes in
network namespaces, the real shadowsocks-libev, an agent in every sandbox, and the gateway on 127.0.0.1.
It stays in the foreground; Ctrl-C (or SIGTERM) tears everything down.

  --mode          client mode of the sandboxes (default: the stack's template.mode)
  --sandboxes     how many sandboxes (default 2)
  --gateway-port  gateway port on 127.0.0.1 (default: the stack's gateway.port)
  --stack         stack whose config to use when Pulumi.<stack>.yaml exists (default ${DEFAULT_STACK}; else the defaults)
  --name          lab name; namespaces are sk-<name>-* (default local)`;

/** The stack's config when the project has Pulumi.<stack>.yaml, else the schema's defaults. */
function localConfig(stack: string): { config: StackConfig; source: string } {
  let path: string | undefined;
  try {
    path = stackFilePath(findProjectDir(process.cwd()), stack);
  } catch {
    path = undefined;
  }
  if (!path || !existsSync(path)) return { config: loadStackConfig({}), source: 'defaults' };
  const loaded = loadStack(stack);
  if (!loaded.config) throw new Error(`${loaded.path}: ${formatIssues(loaded.issues)}`);
  return { config: loaded.config, source: loaded.path };
}

function printSummary(system: LocalSystem, config: StackConfig): void {
  const url = `http://127.0.0.1:${system.gateway.port}`;
  const first = system.sandboxes[0]!;
  const idHeader = `${config.brand}-Sandbox-Id`;
  console.log(`
The local system is up.
  gateway     ${url}   (routes by ${idHeader} / ${config.brand}-Sandbox-Port)
  proxy       ingress ${system.lab.ingressEip}, egress ${system.lab.egressEip} (${system.lab.mode} mode)
  sandboxes   ${system.sandboxes.map((s) => `${s.sandboxID} (${s.node}, ${s.address})`).join(', ')}
  tokens      ${system.catalogFile} (0600; the gateway's file-catalog format)

Try:
  curl -s ${url}/filesystem.Filesystem/ListDir -H 'Content-Type: application/json' \\
    -H 'Connect-Protocol-Version: 1' -H '${idHeader}: ${first.sandboxID}' \\
    -H "X-Access-Token: $(node -p "require('${system.catalogFile}')[0].token")" -d '{"path": "/", "depth": 1}'
  npm run sandbox-kit -- lab exec ${first.node} --name ${system.lab.name} -- curl -s ${system.lab.mode === 'local' ? `--socks5-hostname 127.0.0.1:${system.lab.socksPort} ` : ''}http://${system.lab.plan.web}/

Press Ctrl-C to stop and remove everything.`);
}

export async function run(argv: string[]): Promise<number> {
  const { values, help } = parseFlags('up', argv, {
    mode: labModeFlag(),
    sandboxes: sandboxCountFlag(2),
    'gateway-port': valueFlag(integer(0, 65535, 'a port from 0 to 65535 (0 picks a free one)').optional()),
    stack: valueFlag(stackName().default(DEFAULT_STACK)),
    name: labNameFlag('local'),
  });
  if (help) {
    console.log(HELP);
    return 0;
  }
  const mode = values.mode;
  const count = values.sandboxes;
  const gatewayPort = values['gateway-port'];

  const { config, source } = localConfig(values.stack);
  console.log(`[config] ${source === 'defaults' ? 'no stack file: using the defaults' : `stack config from ${source}`}`);
  const system = await startLocalSystem({
    name: values.name,
    mode,
    sandboxes: count,
    gatewayPort,
    config,
    onProgress: (e) => console.log(`[${e.step}] ${e.message}`),
  });

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      console.log('\nstopping: gateway, agents, proxy, namespaces');
      await system.close();
      console.log('stopped; nothing of the local system is left');
    })();
    return stopping;
  };
  try {
    const check = await system.lab.egressCheck();
    console.log(
      `[check] direct from ${check.directFrom}: ${check.direct}; through the proxy: ${check.proxied} (expected ${check.expectedEgress}) -> ${check.ok ? 'ok' : 'FAILED'}`,
    );
    if (!check.ok) throw new Error('the egress check failed: the sandbox does not leave through the proxy');
    printSummary(system, config);
    console.log('ready');
  } catch (err) {
    await stop();
    throw err;
  }

  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await stop();
  return 0;
}
