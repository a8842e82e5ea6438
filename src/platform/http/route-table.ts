import type { HttpMethod, Route } from './types';

/** What a request path and method found in the route table. */
export type RouteMatch =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allowed: HttpMethod[] }
  | { kind: 'not-found' }
  /** A parameter segment that is not valid percent-encoding. */
  | { kind: 'bad-path'; message: string };

interface CompiledRoute {
  route: Route;
  segments: Array<{ literal: string } | { param: string }>;
}

function compile(route: Route): CompiledRoute {
  if (!route.path.startsWith('/')) throw new Error(`route path ${JSON.stringify(route.path)} must start with "/"`);
  const segments = route.path
    .split('/')
    .slice(1)
    .map((s) => (s.startsWith(':') ? { param: s.slice(1) } : { literal: s }));
  return { route, segments };
}

function splitPath(pathname: string): string[] {
  const trimmed = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
  return trimmed.split('/').slice(1);
}

/** Matches `:name` segments; a path that matches with another method answers 405 with the methods it has. */
export class RouteTable {
  private readonly compiled: CompiledRoute[];

  constructor(routes: readonly Route[]) {
    this.compiled = routes.map(compile);
    const seen = new Set<string>();
    for (const { route } of this.compiled) {
      const key = `${route.method} ${route.path.replace(/:[^/]+/g, ':')}`;
      if (seen.has(key)) throw new Error(`two routes for ${route.method} ${route.path}`);
      seen.add(key);
    }
  }

  match(method: string, pathname: string): RouteMatch {
    const parts = splitPath(pathname);
    const allowed: HttpMethod[] = [];
    for (const { route, segments } of this.compiled) {
      if (segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < segments.length && ok; i++) {
        const segment = segments[i];
        if ('literal' in segment) {
          ok = segment.literal === parts[i];
        } else if (parts[i] === '') {
          ok = false;
        } else {
          try {
            params[segment.param] = decodeURIComponent(parts[i]);
          } catch {
            return { kind: 'bad-path', message: `path segment ${JSON.stringify(parts[i])} is not valid percent-encoding` };
          }
        }
      }
      if (!ok) continue;
      if (route.method === method) return { kind: 'found', route, params };
      if (!allowed.includes(route.method)) allowed.push(route.method);
    }
    return allowed.length > 0 ? { kind: 'method-not-allowed', allowed } : { kind: 'not-found' };
  }
}
