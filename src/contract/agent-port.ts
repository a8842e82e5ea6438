/** The agent's port inside every sandbox (the default of `Svc-Sandbox-Port`, docs/design.md#routing). Agent, gateway and schema share it. */
export const DEFAULT_AGENT_PORT = 49983;
