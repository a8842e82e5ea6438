/** `sandbox-kit up`: the whole system on this machine, left running; `status`, `rotate` and `down` take it from there. */
import { existsSync, readFileSync } from 'node:fs';
import { formatIssues, integer, loadStackConfig, oneOf, type StackConfig, stackFilePath } from '../../config';
import { RUNSC_PLATFORMS, RUNTIME_CHOICES } from '../../contract/runtime-choice';
import { attachLab, whoamiUrl } from '../../lab';
import { SANDBOX_SOURCES, summaryText, upJson, upLocal } from '../../local';
import { parseFlags, switchFlag, valueFlag } from '../args';
import { labModeFlag, labNameFlag, sandboxCountFlag } from '../lab-flags';
import { DEFAULT_STACK, findProjectDir, loadStack, stackName } from '../stack';

const HELP = `usage: sandbox-kit up [--mode local|transparent] [--sandboxes N] [--gateway-port P] [--stack NAME] [--name NAME] [--json]
                      [--no-templates] [--no-host-ca-certs] [--runtime crun|runc|runsc|auto] [--runsc-platform P]

Brings the whole system up on this machine (root, Debian) and leaves it running: the proxy host, the internet and
the sandbox network in network namespaces with the real shadowsocks-libev, the platform API and the gateway on
127.0.0.1, the proxy template built through the API, and sandboxes created from it. It checks before it says "up": a sandbox's traffic leaves through the proxy's egress address,
and a command, a ListDir and a wrong token behave through the gateway. Run it again: a healthy system is left as it
is. Then: sandbox-kit status | rotate | down. Once the system is up, the platform builds the templates the SDKs
create from by default, mcp-gateway and code-interpreter-v1, in the background ('status' shows their progress); the
platform's state, with their layer cache, is kept in /var/lib/sandbox-kit/local across 'down'.

  --mode          client mode of the sandboxes (default: the stack's template.mode)
  --sandboxes     how many sandboxes (default 2)
  --gateway-port  gateway port on 127.0.0.1 (default: the stack's gateway.port; 0 picks a free one)
  --stack         stack whose config to use when Pulumi.<stack>.yaml exists (default ${DEFAULT_STACK}; else the defaults)
  --name          the system's name; its namespaces are sk-<name>-* (default local)
  --json          print one JSON line at the end (progress goes to stderr)
  --sandboxes-from  platform (default): the platform API runs on the lab's sandbox network, builds the proxy
                  template with the E2B SDK and creates the sandboxes from it; lab: the lab's own sandbox namespaces
                  with an agent started in each (no platform, no template)
  --no-templates  do not build mcp-gateway and code-interpreter-v1 (creates from them then fail with 404)
  --no-host-ca-certs  the background-built templates trust Debian's CAs only, not this host's store (by default
                  they trust it too, so their builds and sandboxes work behind a TLS-inspecting proxy)
  --runtime       crun, runc, runsc (gVisor: a kernel of its own per sandbox) or auto (default: the stack's
                  sandboxHost.runtime)
  --runsc-platform  systrap, ptrace or kvm: how gVisor runs under runsc (default: the stack's sandboxHost.runscPlatform)`;

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

export async function run(argv: string[]): Promise<number> {
  const { values, help } = parseFlags('up', argv, {
    mode: labModeFlag(),
    sandboxes: sandboxCountFlag(2),
    'gateway-port': valueFlag(integer(0, 65535, 'a port from 0 to 65535 (0 picks a free one)').optional()),
    stack: valueFlag(stackName().default(DEFAULT_STACK)),
    name: labNameFlag('local'),
    json: switchFlag(),
    'sandboxes-from': valueFlag(oneOf(SANDBOX_SOURCES).default(SANDBOX_SOURCES[0])),
    'no-host-ca-certs': switchFlag(),
    'no-templates': switchFlag(),
    runtime: valueFlag(oneOf(RUNTIME_CHOICES).optional()),
    'runsc-platform': valueFlag(oneOf(RUNSC_PLATFORMS).optional()),
  });
  if (help) {
    console.log(HELP);
    return 0;
  }
  const out = values.json ? process.stderr : process.stdout;
  const stack = localConfig(values.stack);
  const { source } = stack;
  // The flags win over the stack's sandboxHost.runtime and sandboxHost.runscPlatform.
  const config: StackConfig = {
    ...stack.config,
    sandboxHost: {
      ...stack.config.sandboxHost,
      runtime: values.runtime ?? stack.config.sandboxHost.runtime,
      runscPlatform: values['runsc-platform'] ?? stack.config.sandboxHost.runscPlatform,
    },
  };
  out.write(`[config] ${source === 'defaults' ? 'no stack file: using the defaults' : `stack config from ${source}`}\n`);
  const result = await upLocal({
    name: values.name,
    mode: values.mode,
    sandboxes: values.sandboxes,
    gatewayPort: values['gateway-port'],
    config,
    sandboxesFrom: values['sandboxes-from'],
    hostCaCerts: !values['no-host-ca-certs'],
    templates: !values['no-templates'],
    onProgress: (e) => out.write(`[${e.step}] ${e.message}\n`),
  });
  const lab = attachLab(values.name);
  const facts = {
    state: result.state,
    warm: result.warm,
    ingressIp: lab.ingressEip,
    egressIp: lab.egressEip,
    whoamiUrl: whoamiUrl(lab.plan.web, lab.plan.webHttpPort),
    socksPort: lab.socksPort,
    ...(result.state.platform ? { apiKey: readFileSync(result.state.platform.apiKeyFile, 'utf8').split('\n')[0]!.trim() } : {}),
  };
  if (values.json) console.log(JSON.stringify(upJson(facts)));
  else console.log(summaryText(facts));
  return 0;
}
