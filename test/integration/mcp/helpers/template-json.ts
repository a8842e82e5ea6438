/** Prints the step JSON of the mcp-gateway template (as the E2B SDK sends it) for the given servers, or the error. */
import { Template } from 'e2b';
import { MCP_GATEWAY_TEMPLATE, mcpGatewayTemplate } from '../../../../templates/mcp-gateway';

const servers = process.argv[2] === undefined ? undefined : (JSON.parse(process.argv[2]) as string[]);
try {
  Template.toJSON(mcpGatewayTemplate({ servers }), false).then((json) =>
    console.log(JSON.stringify({ ...JSON.parse(json), build: MCP_GATEWAY_TEMPLATE })),
  );
} catch (err) {
  console.log(JSON.stringify({ error: (err as Error).message }));
}
