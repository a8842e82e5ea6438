import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Upstream } from './upstream';

/** Tools are exposed as `<server>__<tool>`: server names never contain `__`, so the first `__` splits them. */
export const TOOL_SEPARATOR = '__';

export function namespacedTools(upstreams: Map<string, Upstream>): Tool[] {
  const tools: Tool[] = [];
  for (const [name, upstream] of upstreams) {
    for (const tool of upstream.tools) tools.push({ ...tool, name: `${name}${TOOL_SEPARATOR}${tool.name}` });
  }
  return tools;
}

export function splitToolName(name: string): { server: string; tool: string } | undefined {
  const at = name.indexOf(TOOL_SEPARATOR);
  if (at <= 0) return undefined;
  return { server: name.slice(0, at), tool: name.slice(at + TOOL_SEPARATOR.length) };
}

function errorResult(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

/**
 * One MCP server per client session, answering tools/list and tools/call from the upstreams. A server that could not
 * even be planned (its package or image is not there) has no tools; a call naming it answers why.
 */
export function createFacade(
  upstreams: Map<string, Upstream>,
  version: string,
  unplanned: { name: string; state: string; error?: string }[] = [],
): Server {
  const server = new Server({ name: 'mcp-gateway', version }, { capabilities: { tools: { listChanged: true } } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: namespacedTools(upstreams) }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const split = splitToolName(request.params.name);
    const upstream = split === undefined ? undefined : upstreams.get(split.server);
    const failed = split === undefined ? undefined : unplanned.find((f) => f.name === split.server);
    if (failed !== undefined)
      return errorResult(
        failed.state === 'pulling'
          ? `server ${failed.name} is pulling: ${failed.error}; its tools are listed once it has started`
          : `server ${failed.name} is failed: ${failed.error}`,
      );
    if (split === undefined || upstream === undefined) {
      return errorResult(
        `unknown tool ${JSON.stringify(request.params.name)}: tools are named <server>${TOOL_SEPARATOR}<tool>; servers: ${[...upstreams.keys()].join(', ')}`,
      );
    }
    try {
      return await upstream.call(split.tool, request.params.arguments);
    } catch (err) {
      return errorResult(`${split.server}: ${(err as Error).message}`);
    }
  });
  return server;
}
