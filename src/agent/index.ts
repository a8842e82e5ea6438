/** The in-sandbox agent: start it in-process with startAgent, run `sandbox-kit agent`, or bundle main.ts. */
export { startAgent, SERVICE_PREFIX, type RunningAgent } from './server';
export {
  parseAgentOptions,
  DEFAULT_AGENT_PORT,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_ENTRIES,
  DEFAULT_MAX_RESPONSE_BYTES,
  type AgentOptions,
  type AgentOptionsInput,
} from './options';
export { AgentError } from './errors';
export { bytesToText, textToBytes } from './bytes-text';
export { runAgentCli } from './cli';
