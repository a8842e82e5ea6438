import { type McpConfig, validateMcpConfig } from '../../../src/mcp/config/validate';

// These literals are checked by the compiler (`npm run typecheck` covers test/): a wrong key or type is an error.
const good: McpConfig = {
  filesystem: { paths: ['/home/user'] },
  memory: {},
  sequentialthinking: {},
  custom: { mine: { runCmd: 'node server.js', envs: { A: '1' } } },
};
// @ts-expect-error paths is required
const missing: McpConfig = { filesystem: {} };
// @ts-expect-error paths is a list of strings
const wrongType: McpConfig = { filesystem: { paths: '/home/user' } };
// @ts-expect-error no such server
const unknownServer: McpConfig = { filesytem: { paths: [] } };
// @ts-expect-error no such property
const unknownKey: McpConfig = { memory: { path: '/x' } };

describe('the generated types and the runtime check agree', () => {
  test('what the compiler accepts validates, what it refuses is refused', () => {
    expect(validateMcpConfig(good).ok).toBe(true);
    for (const bad of [missing, wrongType, unknownServer, unknownKey]) expect(validateMcpConfig(bad).ok).toBe(false);
  });
});
