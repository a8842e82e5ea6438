import type { IncomingMessage } from 'node:http';
import { checkSandboxMcp } from '../../../../src/platform/sandboxes/mcp-check';
import { sandboxRoutes } from '../../../../src/platform/sandboxes/routes';
import type { SandboxService } from '../../../../src/platform/sandboxes/service';
import { ApiError } from '../../../../src/platform/http/types';
import { operatorCaller } from '../../../../src/platform/teams/model';

/** POST /v2/sandboxes checks `mcp` before asking the service for anything. */
describe('POST /v2/sandboxes with mcp', () => {
  const created: unknown[] = [];
  const service = {
    create: async (request: unknown) => {
      created.push(request);
      throw new ApiError(503, 'stand-in service: nothing is made here');
    },
  } as unknown as SandboxService;
  const route = sandboxRoutes(service, { domain: null, clientID: 'test' }).find((r) => r.method === 'POST' && r.path === '/v2/sandboxes')!;
  const post = (body: unknown) =>
    route.handler({ method: 'POST', params: {}, query: new URLSearchParams(), body, raw: {} as IncomingMessage, caller: operatorCaller() });

  beforeEach(() => created.splice(0));

  test.each([
    [
      'an unknown server',
      { filesytem: { paths: ['/tmp'] } },
      'mcp.filesytem: got {"paths":["/tmp"]}; expected a server of the catalog or custom (did you mean filesystem?',
    ],
    [
      'an unknown key',
      { memory: { file: '/x' } },
      'mcp.memory.file: got "/x"; expected no such property (properties of memory: memoryFilePath)',
    ],
    ['a wrong type', { filesystem: { paths: '/tmp' } }, 'mcp.filesystem.paths: got "/tmp"; expected a list of strings'],
    ['a missing required key', { filesystem: {} }, 'mcp.filesystem.paths: got (missing); expected a list of strings (required)'],
  ])('%s is a 400 naming the server and key, and nothing is created', async (_kind, mcp, message) => {
    await expect(post({ templateID: 'mcp-gateway', mcp })).rejects.toMatchObject({ code: 400, message: expect.stringContaining(message) });
    expect(created).toEqual([]);
  });

  test('a valid mcp config goes on to the service', async () => {
    await expect(post({ templateID: 'mcp-gateway', mcp: { filesystem: { paths: ['/home/user'] }, memory: {} } })).rejects.toMatchObject({
      code: 503,
    });
    expect(created).toHaveLength(1);
  });
});

describe('checkSandboxMcp (POST /v2/sandboxes)', () => {
  test('no mcp is no MCP; a valid one is returned validated; a bad one is a 400 naming each key', () => {
    expect(checkSandboxMcp(undefined)).toBeUndefined();
    expect(checkSandboxMcp({ memory: {} })).toEqual({ servers: { memory: {} }, custom: {} });
    let error: unknown;
    try {
      checkSandboxMcp({ filesystem: { paths: [1] }, memory: { x: 1 } });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe(400);
    expect((error as Error).message).toContain('mcp.filesystem.paths[0]: got 1; expected a string');
    expect((error as Error).message).toContain('mcp.memory.x: got 1; expected no such property');
  });
});
