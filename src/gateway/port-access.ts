/**
 * Who may call which port of a sandbox, as E2B's proxy decides it. The agent's port needs the sandbox's access token
 * (X-Access-Token). Every other port is public, unless the sandbox was created with `allowPublicTraffic: false`:
 * then it needs the traffic access token (e2b-traffic-access-token). Each credential goes only where it is checked:
 * the access token reaches the agent and nothing else (a process of the sandbox's unprivileged user listening on
 * another port would otherwise receive the key to the agent, which runs as root), and the traffic token reaches no
 * port at all. A signed `/files` URL needs no access token: the agent checks its signature. Pure apart from the token
 * checker's cache.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { AccessTokenChecker } from '../contract/access-token';
import { ACCESS_TOKEN_HEADER, TRAFFIC_ACCESS_TOKEN_HEADER } from '../contract/headers';
import type { CatalogEntry } from '../catalog/entry';
import { accessDenied, trafficDenied, type GatewayErrorBody } from './error-response';

const ACCESS = ACCESS_TOKEN_HEADER.toLowerCase();
const TRAFFIC = TRAFFIC_ACCESS_TOKEN_HEADER.toLowerCase();

/** Headers never passed on to the agent's port, and to any other port. */
const TO_AGENT_DROPPED: ReadonlySet<string> = new Set([TRAFFIC]);
const TO_OTHER_PORTS_DROPPED: ReadonlySet<string> = new Set([ACCESS, TRAFFIC]);

export type PortAccess = { ok: true; port: number; dropped: ReadonlySet<string> } | { ok: false; error: GatewayErrorBody };

/** `port` undefined: the request named none, so it is for the agent. */
export function portAccess(
  headers: IncomingHttpHeaders,
  entry: CatalogEntry,
  port: number | undefined,
  tokens: AccessTokenChecker,
  /** A signed `/files` URL (signed-url.ts): it carries no access token; the agent checks its signature and expiry. */
  signedFiles = false,
): PortAccess {
  const target = port ?? entry.agentPort;
  if (target === entry.agentPort) {
    if (signedFiles && headers[ACCESS] === undefined) return { ok: true, port: target, dropped: TO_AGENT_DROPPED };
    const verdict = tokens.check(headers[ACCESS], entry.tokenHash);
    if (verdict !== 'ok') return { ok: false, error: accessDenied(entry.sandboxID, verdict) };
    return { ok: true, port: target, dropped: TO_AGENT_DROPPED };
  }
  if (entry.trafficTokenHash !== undefined) {
    const verdict = tokens.check(headers[TRAFFIC], entry.trafficTokenHash);
    if (verdict !== 'ok') return { ok: false, error: trafficDenied(entry.sandboxID, target, verdict) };
  }
  return { ok: true, port: target, dropped: TO_OTHER_PORTS_DROPPED };
}
