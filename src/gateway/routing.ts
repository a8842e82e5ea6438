import type { IncomingHttpHeaders } from 'node:http';
import { brandNames } from '../contract/brand';
import { sandboxOfToken } from '../contract/access-token';
import { ACCESS_TOKEN_HEADER, E2B_BRAND } from '../contract/headers';
import { SANDBOX_ID_PATTERN } from '../contract/sandbox-id';

/** The two routing headers of one brand, as Node presents them (lower case) and as messages name them. */
export interface RoutingHeaders {
  /** e.g. `svc-sandbox-id` */
  idHeader: string;
  portHeader: string;
  /** e.g. `Svc-Sandbox-Id` */
  idHeaderName: string;
  portHeaderName: string;
}

export interface RoutingSettings {
  /** The configured brand's headers first, then the E2B SDK's (once, when the brand is E2B's own). */
  brands: readonly RoutingHeaders[];
  /** The sandbox domain: the host form is `{port}-{sandboxID}.{domain}`. */
  domain: string;
}

export type RouteDecision =
  /** port undefined: the request named none, use the sandbox's agent port. */
  { ok: true; sandboxID: string; port: number | undefined } | { ok: false; status: 400; message: string };

const PORT_TEXT = /^[0-9]{1,5}$/;

/** Routing headers for a brand plus the E2B SDK's, so the unmodified SDK works whatever the brand. */
export function routingHeadersFor(brand: string): RoutingHeaders[] {
  const list = [brand, E2B_BRAND].filter((b, i, all) => all.indexOf(b) === i);
  return list.map((b) => {
    const names = brandNames(b);
    return {
      idHeader: names.sandboxIdHeader.toLowerCase(),
      portHeader: names.sandboxPortHeader.toLowerCase(),
      idHeaderName: names.sandboxIdHeader,
      portHeaderName: names.sandboxPortHeader,
    };
  });
}

/**
 * Decides, from the request alone, which sandbox and port a request is for. The header form wins (either brand's
 * pair; the port header of the brand whose ID header named the sandbox); without an ID header the Host may name the
 * target as `{port}-{sandboxID}.{domain}`, and without that the access token may (its sandbox's agent port; see
 * tokenForSandbox). Two ID headers naming different sandboxes are refused rather than
 * guessed. Nothing here can name an address: the address always comes from the catalog entry of the sandbox.
 */
export function decideRoute(headers: IncomingHttpHeaders, url: string | undefined, settings: RoutingSettings): RouteDecision {
  if (url === undefined || !url.startsWith('/')) {
    return { ok: false, status: 400, message: 'the request target must be an absolute path such as /filesystem.Filesystem/Stat' };
  }
  let chosen: RoutingHeaders | undefined;
  let idValue: string | string[] | undefined;
  for (const brand of settings.brands) {
    const value = headers[brand.idHeader];
    if (value === undefined) continue;
    if (chosen === undefined) {
      chosen = brand;
      idValue = value;
    } else if (value !== idValue) {
      return {
        ok: false,
        status: 400,
        message: `headers ${chosen.idHeaderName} and ${brand.idHeaderName} name different sandboxes (${JSON.stringify(idValue)} and ${JSON.stringify(value)}); send one`,
      };
    }
  }
  if (chosen !== undefined) {
    if (typeof idValue !== 'string' || !SANDBOX_ID_PATTERN.test(idValue)) {
      return { ok: false, status: 400, message: `header ${chosen.idHeaderName} must be one sandbox ID (letters, digits, "_" or "-")` };
    }
    const portValue = headers[chosen.portHeader];
    if (portValue === undefined) return { ok: true, sandboxID: idValue, port: undefined };
    const port = parsePort(portValue);
    if (port === undefined) {
      return {
        ok: false,
        status: 400,
        message: `header ${chosen.portHeaderName} must be an integer from 1 to 65535, got ${JSON.stringify(portValue)}`,
      };
    }
    return { ok: true, sandboxID: idValue, port };
  }
  const fromHost = routeFromHost(headers.host, settings.domain);
  if (fromHost) return { ok: true, ...fromHost };
  const fromToken = sandboxOfToken(headers[ACCESS_TOKEN_HEADER.toLowerCase()]);
  if (fromToken !== undefined && SANDBOX_ID_PATTERN.test(fromToken)) return { ok: true, sandboxID: fromToken, port: undefined };
  const names = settings.brands.map((b) => b.idHeaderName).join(' or ');
  return {
    ok: false,
    status: 400,
    message: `missing header ${names}: it names the sandbox to route to (or use the host ${'{port}'}-${'{sandboxID}'}.${settings.domain})`,
  };
}

export function parsePort(value: string | string[] | undefined): number | undefined {
  if (typeof value !== 'string' || !PORT_TEXT.test(value)) return undefined;
  const port = Number(value);
  return port >= 1 && port <= 65535 ? port : undefined;
}

/** A Host header's name: lower case, without the port and a trailing dot. */
export function hostName(host: string): string {
  return host
    .toLowerCase()
    .replace(/:[0-9]+$/, '')
    .replace(/\.$/, '');
}

/** Whether the request is for the platform API's name in the E2B_DOMAIN form, `api.{domain}`. */
export function isApiHost(host: string | undefined, domain: string): boolean {
  return host !== undefined && hostName(host) === `api.${domain.toLowerCase()}`;
}

/** `49983-abc123.sandbox.example.com:443` with domain `sandbox.example.com` -> abc123 on 49983. */
export function routeFromHost(host: string | undefined, domain: string): { sandboxID: string; port: number } | undefined {
  if (host === undefined) return undefined;
  const name = hostName(host);
  const suffix = `.${domain.toLowerCase()}`;
  if (!name.endsWith(suffix)) return undefined;
  const label = name.slice(0, -suffix.length);
  const match = /^([0-9]{1,5})-(.+)$/.exec(label);
  if (!match || !SANDBOX_ID_PATTERN.test(match[2])) return undefined;
  const port = parsePort(match[1]);
  return port === undefined ? undefined : { sandboxID: match[2], port };
}
