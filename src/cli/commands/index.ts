/** The command table. Each command lives in its own module, loaded only when it runs. */
export interface CommandModule {
  /** Runs the command with its arguments; resolves to the exit code. Long-running servers resolve on shutdown. */
  run(argv: string[]): Promise<number>;
}

export interface Command {
  name: string;
  summary: string;
  load(): Promise<CommandModule>;
}

export const COMMANDS: Command[] = [
  {
    name: 'up',
    summary: 'bring the whole system up locally (lab, proxy, sandboxes, gateway, agents) and leave it running',
    load: () => import('./up'),
  },
  { name: 'status', summary: 'what of the local system is running and healthy', load: () => import('./status') },
  { name: 'rotate', summary: "give the local system's proxy a new egress address under load, measured", load: () => import('./rotate') },
  { name: 'down', summary: 'remove the local system (idempotent, also after a crash)', load: () => import('./down') },
  { name: 'check-config', summary: 'validate a stack config and list every problem', load: () => import('./check-config') },
  {
    name: 'template',
    summary: "build the stack's proxy template through an E2B-compatible API, logs live",
    load: () => import('./template'),
  },
  { name: 'render', summary: 'write every proxy artifact of a stack to a directory', load: () => import('./render') },
  { name: 'lab', summary: 'the local network-namespace lab: up, status, exec, down', load: () => import('./lab') },
  { name: 'agent', summary: 'run the in-sandbox agent (filesystem, processes, files, init)', load: () => import('./agent') },
  { name: 'platform', summary: 'run the E2B-compatible sandbox platform API (sandboxes, templates)', load: () => import('./platform') },
  { name: 'gateway', summary: 'run the shared sandbox gateway that routes by header', load: () => import('./gateway') },
  { name: 'rootfs', summary: 'build or find the cached base root file systems (mmdebstrap)', load: () => import('./rootfs') },
  { name: 'mcp', summary: 'MCP tool servers: list the catalog, check a config, run the in-sandbox gateway', load: () => import('./mcp') },
  { name: 'team', summary: "the platform's teams: create, list, quota, delete", load: () => import('./team') },
  { name: 'key', summary: "API keys of the platform's teams: create (shown once), list, revoke", load: () => import('./key') },
  {
    name: 'gc',
    summary: "remove the platform's unused layers, uploads and pulled images now; prints the bytes freed",
    load: () => import('./gc'),
  },
  { name: 'audit', summary: "the platform's audit trail: who changed what, when, from where", load: () => import('./audit') },
  { name: 'verify', summary: 'check a deployed proxy host over SSH', load: () => import('./verify') },
];
