/** What `up` prints at the end, as text for a person and as one JSON line for a program. Pure. */
import type { LocalState } from './state';

export interface SummaryFacts {
  state: LocalState;
  warm: boolean;
  ingressIp: string;
  egressIp: string;
  /** The whoami service on the lab's internet and the SOCKS5 port in the sandboxes, for the commands to try. */
  whoamiUrl: string;
  socksPort: number;
  /** The platform's API key, when the sandboxes come from the platform. */
  apiKey?: string;
}

export interface UpJson {
  name: string;
  warm: boolean;
  sandboxUrl: string;
  /** The platform API and its key: null until the local system runs the platform. */
  apiUrl: string | null;
  apiKey: string | null;
  tokensFile: string;
  sandboxes: { sandboxID: string; node: string; address: string; agentPort: number }[];
  proxy: { mode: string; ingressIp: string; egressIp: string };
  template: { alias: string; templateID: string | null };
  timings: Record<string, number>;
}

export function upJson(f: SummaryFacts): UpJson {
  const { state } = f;
  return {
    name: state.name,
    warm: f.warm,
    sandboxUrl: state.gateway!.url,
    apiUrl: state.platform?.url ?? null,
    apiKey: f.apiKey ?? null,
    tokensFile: state.catalogFile,
    sandboxes: state.sandboxes.map((s) => ({ sandboxID: s.sandboxID, node: s.node, address: s.address, agentPort: s.agentPort })),
    proxy: { mode: state.mode, ingressIp: f.ingressIp, egressIp: f.egressIp },
    template: { alias: state.config.template.alias, templateID: state.template?.templateID ?? null },
    timings: state.timings,
  };
}

function seconds(timings: Record<string, number>): string {
  const total = Object.values(timings).reduce((a, b) => a + b, 0);
  const parts = Object.entries(timings).map(([k, v]) => `${k} ${v.toFixed(1)} s`);
  return `${total.toFixed(1)} s: ${parts.join(', ')}`;
}

export function summaryText(f: SummaryFacts): string {
  const { state } = f;
  const first = state.sandboxes[0]!;
  const url = state.gateway!.url;
  const nameFlag = state.name === 'local' ? '' : ` --name ${state.name}`;
  const socks = state.mode === 'local' ? `--socks5-hostname 127.0.0.1:${f.socksPort} ` : '';
  const header = f.warm
    ? `The local system ${state.name} was already up (since ${state.readyAt}); nothing was rebuilt.`
    : `The local system ${state.name} is up (${seconds(state.timings)}).`;
  return `
${header}
  sandbox URL  ${url}   (the gateway; routes by E2b-Sandbox-Id or ${state.config.brand}-Sandbox-Id)
  tokens       ${state.catalogFile}   (0600: each sandbox's access token)
  sandboxes    ${state.sandboxes.map((s) => (s.node ? `${s.sandboxID} (${s.node}, ${s.address})` : s.sandboxID)).join('\n               ')}
  proxy        ingress ${f.ingressIp}, egress ${f.egressIp} (${state.mode} mode)

${
  state.platform
    ? `  API URL      ${state.platform.url}   (key in ${state.platform.apiKeyFile}, 0600)
  template     ${state.template?.alias} (${state.template?.templateID})
`
    : ''
}
Try:
${
  state.platform
    ? `  export E2B_API_URL=${state.platform.url}
  export E2B_VOLUME_API_URL=${state.platform.url}   # the SDK's Volume file calls
  export E2B_API_KEY=$(cat ${state.platform.apiKeyFile})
`
    : ''
}  export E2B_SANDBOX_URL=${url}
${
  state.platform
    ? `  node -e "const {Sandbox} = require('e2b'); Sandbox.connect('${first.sandboxID}')
    .then((s) => s.commands.run('curl -s ${socks}${f.whoamiUrl}')).then((r) => console.log(r.stdout))"   # the egress address
`
    : ''
}  curl -s $E2B_SANDBOX_URL/filesystem.Filesystem/ListDir -H 'Content-Type: application/json' -H 'Connect-Protocol-Version: 1' \\
    -H 'E2b-Sandbox-Id: ${first.sandboxID}' -H "X-Access-Token: $(node -p "require('${state.catalogFile}')[0].token")" \\
    -d '{"path": "/", "depth": 1}'
${
  first.node
    ? `  sandbox-kit lab exec ${first.node}${nameFlag} -- curl -s ${socks}${f.whoamiUrl}   # shows the egress address
`
    : ''
}  sandbox-kit status${nameFlag}     # what is running and healthy
  sandbox-kit rotate${nameFlag}     # a new egress address while a sandbox keeps using the proxy
  sandbox-kit down${nameFlag}       # stop everything; paused sandboxes, snapshots, volumes and templates wait for the next up
`;
}
