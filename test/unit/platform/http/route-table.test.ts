import { RouteTable } from '../../../../src/platform/http/route-table';
import type { Route } from '../../../../src/platform/http/types';

const route = (method: Route['method'], path: string): Route => ({ method, path, auth: 'api-key', handler: async () => ({ status: 204 }) });

describe('RouteTable', () => {
  const table = new RouteTable([
    route('POST', '/v2/sandboxes'),
    route('GET', '/v2/sandboxes'),
    route('GET', '/sandboxes/:sandboxID'),
    route('DELETE', '/sandboxes/:sandboxID'),
    route('POST', '/sandboxes/:sandboxID/pause'),
    route('GET', '/templates/:templateID/builds/:buildID/status'),
  ]);

  it('finds literal paths by method', () => {
    const get = table.match('GET', '/v2/sandboxes');
    const post = table.match('POST', '/v2/sandboxes');
    expect(get.kind === 'found' && get.route.method).toBe('GET');
    expect(post.kind === 'found' && post.route.method).toBe('POST');
  });

  it('names the parameters, decoded', () => {
    const m = table.match('GET', '/templates/t%20x/builds/b1/status');
    expect(m).toMatchObject({ kind: 'found', params: { templateID: 't x', buildID: 'b1' } });
  });

  it('ignores a trailing slash', () => {
    expect(table.match('POST', '/sandboxes/abc/pause/')).toMatchObject({ kind: 'found', params: { sandboxID: 'abc' } });
  });

  it('answers method-not-allowed with the methods the path has', () => {
    expect(table.match('PUT', '/sandboxes/abc')).toEqual({ kind: 'method-not-allowed', allowed: ['GET', 'DELETE'] });
  });

  it('does not match an empty parameter or extra segments', () => {
    expect(table.match('GET', '/sandboxes//')).toEqual({ kind: 'not-found' });
    expect(table.match('GET', '/sandboxes/a/b')).toEqual({ kind: 'not-found' });
    expect(table.match('GET', '/nothing')).toEqual({ kind: 'not-found' });
  });

  it('reports a broken percent-encoding', () => {
    expect(table.match('GET', '/sandboxes/%E0%A4%A').kind).toBe('bad-path');
  });

  it('refuses two routes for the same method and shape', () => {
    expect(() => new RouteTable([route('GET', '/a/:x'), route('GET', '/a/:y')])).toThrow('two routes for GET /a/:y');
  });
});
