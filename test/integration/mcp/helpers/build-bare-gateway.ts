/**
 * Builds a bare `mcp-gateway` template with the unmodified E2B SDK (in a plain Node process): Debian and the
 * `mcp-gateway` command, no npm server and no image, so every image server of a create is pulled. Prints one JSON
 * line: the build's info or its error.
 */
import { Template } from 'e2b';
import { GATEWAY_COMMAND_PATH, gatewayWrapperScript } from '../../../../src/mcp/template/wrapper';

const [apiUrl, apiKey, alias] = process.argv.slice(2);
const wrapper = Buffer.from(gatewayWrapperScript()).toString('base64');
const template = Template()
  .fromDebianImage('bookworm')
  .runCmd(`echo ${wrapper} | base64 -d > ${GATEWAY_COMMAND_PATH} && chmod 0755 ${GATEWAY_COMMAND_PATH}`, { user: 'root' });
Template.build(template, { alias, apiUrl, apiKey, memoryMB: 1024, cpuCount: 1 }).then(
  (info) => console.log(JSON.stringify({ ok: true, info })),
  (err: Error) => console.log(JSON.stringify({ ok: false, message: err.message })),
);
