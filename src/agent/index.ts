/** The in-sandbox filesystem agent: start it in-process with startAgent, or run `sandbox-kit agent`. */
export { startAgent, SERVICE_PREFIX, type RunningAgent } from './server';
export { parseAgentOptions, DEFAULT_AGENT_PORT, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_ENTRIES, type AgentOptions, type AgentOptionsInput } from './options';
export { AgentError, CONNECT_HTTP_STATUS, type ConnectCode } from './errors';
export { bytesToText, textToBytes } from './bytes-text';
