/** What the E2B SDK assumes about the in-sandbox MCP gateway (`Sandbox.create({ mcp })`, getMcpUrl, getMcpToken). */

/** The template the SDK creates a sandbox from when `mcp` is given and no template is named. */
export const MCP_TEMPLATE = 'mcp-gateway';
/** The port the gateway serves on inside the sandbox: getMcpUrl() is https://50005-<id>.<domain>/mcp. */
export const MCP_GATEWAY_PORT = 50005;
/** The Streamable HTTP endpoint. */
export const MCP_PATH = '/mcp';
/** The env var the SDK sets to the token it generated when it runs `mcp-gateway --config`. */
export const MCP_TOKEN_ENV = 'GATEWAY_ACCESS_TOKEN';
/** Where getMcpToken() reads the token (as root) when the SDK object did not create the sandbox itself. */
export const MCP_TOKEN_FILE = '/etc/mcp-gateway/.token';
/** The command the SDK runs inside the sandbox. */
export const MCP_GATEWAY_COMMAND = 'mcp-gateway';
