/** The facts both ends of the sandbox wire share: the agent, the gateway, the platform and the catalog import them. */
export * from './access-token';
export * from './agent-port';
export * from './brand';
export * from './connect-timeout';
export * from './headers';
export * from './sandbox-id';
export * from './envd-version';
export * from './mcp';
export * from './child-oom';
export * from './api-key';
export * from './code-interpreter';
export * from './file-signature';
export * from './sandbox-ports';
export * from './keep-alive';
