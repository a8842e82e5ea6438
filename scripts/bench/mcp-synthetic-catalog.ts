/**
 * A generated catalog document of `size` entries shaped like a public catalog (API keys, hosts, ports, paths,
 * flags, log levels), for the 250-entry test and the validation benchmark.
 */
const SHAPES = [
  { apiKey: { type: 'string', required: true, secret: true, via: { kind: 'env', name: 'API_KEY' } } },
  {
    host: { type: 'string', required: true, via: { kind: 'flag', flag: '--host' } },
    port: { type: 'string|number', required: false, via: { kind: 'flag', flag: '--port' } },
    username: { type: 'string', required: false, via: { kind: 'env', name: 'DB_USER' } },
    password: { type: 'string', required: true, secret: true, via: { kind: 'env', name: 'DB_PASSWORD' } },
  },
  {
    paths: { type: 'string[]', required: true, via: { kind: 'args' } },
    readOnly: { type: 'boolean', required: false, via: { kind: 'flag', flag: '--read-only' } },
  },
  {
    baseUrl: { type: 'string', required: true, via: { kind: 'env', name: 'BASE_URL' } },
    token: { type: 'string', required: true, secret: true, via: { kind: 'env', name: 'TOKEN' } },
    timeout: { type: 'number', required: false, via: { kind: 'env', name: 'TIMEOUT' } },
    logLevel: { type: 'string', required: false, via: { kind: 'env', name: 'LOG_LEVEL' } },
  },
  {},
] as const;

export function syntheticCatalog(size: number): Record<string, unknown> {
  const doc: Record<string, unknown> = {};
  for (let i = 0; i < size; i++) {
    doc[`server${i}Tool`] = {
      description: `Generated server number ${i}.`,
      run: { npm: { package: `@example/mcp-server-${i}`, bin: `mcp-server-${i}` } },
      properties: SHAPES[i % SHAPES.length],
    };
  }
  return doc;
}

/** A valid config for the server with index i of the synthetic catalog. */
export function syntheticConfig(i: number): Record<string, unknown> {
  switch (i % SHAPES.length) {
    case 0:
      return { apiKey: 'k' };
    case 1:
      return { host: 'db', port: 5432, password: 'p' };
    case 2:
      return { paths: ['/home/user'], readOnly: true };
    case 3:
      return { baseUrl: 'https://x', token: 't', timeout: 30 };
    default:
      return {};
  }
}
