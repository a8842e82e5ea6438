/** The agent's port inside every sandbox (spec: the default of `Svc-Sandbox-Port`). Agent, gateway and schema share it. */
export const DEFAULT_AGENT_PORT = 49983;
