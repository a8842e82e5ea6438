import type { Socket } from 'node:net';
import { AccessTokenChecker } from '../contract/access-token';
import { maskedHost } from '../contract/sandbox-ports';
import { CONNECT_TIMEOUT_HEADER, parseConnectTimeoutMs } from '../contract/connect-timeout';
import { signedFilesQuery } from '../contract/file-signature';
import type { CatalogEntry } from '../catalog/entry';
import type { Catalog } from '../catalog/types';
import type { ClientExchange, RequestHead } from './client-connection';
import { rawErrorFor, sandboxNotFound, sandboxPaused, type GatewayErrorBody } from './error-response';
import { forward, type ForwardSettings, type ForwardTarget } from './forward';
import { portAccess } from './port-access';
import type { SingleFlightResumer } from './resume';
import { decideRoute, isApiHost, type RoutingSettings } from './routing';
import { tunnel } from './tunnel';
import type { SignedUrlOwnerLookup } from './signed-url';
import { sleep } from '../util/poll';

/** How long the catalog may take to show a resumed sandbox as running. */
const RESUME_SETTLE_MS = 5000;

export interface HandlerDeps {
  catalog: Catalog;
  routing: RoutingSettings;
  forwarding: ForwardSettings;
  resumer: SingleFlightResumer | undefined;
  /** Where requests for `api.{domain}` go (see GatewayOptions.apiUpstream). */
  api?: ForwardTarget;
  signedUrlOwner?: SignedUrlOwnerLookup;
  log: (line: string) => void;
}

type Lookup = CatalogEntry | undefined;

/**
 * Where a call the caller may make goes: the sandbox's address and port, over TLS when the sandbox lists the port in
 * its `httpsPorts` (any certificate: the sandbox's own), with its request host mask as the Host on ports other than
 * the agent's.
 */
export function sandboxTarget(e: CatalogEntry, port: number, dropped: ReadonlySet<string>): ForwardTarget {
  const target: ForwardTarget = { sandboxID: e.sandboxID, host: e.host, port, dropped };
  if (port === e.agentPort) return target;
  if (e.httpsPorts?.includes(port)) target.tls = 'unverified';
  if (e.maskRequestHost !== undefined) target.requestHost = maskedHost(e.maskRequestHost, port);
  return target;
}

function isPromise(value: Lookup | Promise<Lookup>): value is Promise<Lookup> {
  return typeof (value as Promise<Lookup> | undefined)?.then === 'function';
}

/** One call in the gateway's hands: a plain request (answered through res) or an upgrade (a raw socket). */
interface Exchange {
  req: RequestHead;
  fail(body: GatewayErrorBody): void;
  deliver(entry: CatalogEntry | undefined, target: ForwardTarget): void;
}

export interface GatewayHandlers {
  request(ex: ClientExchange): void;
  upgrade(req: RequestHead, socket: Socket, head: Buffer): void;
}

/**
 * The gateway's decision for one request, in order: where to (400), which sandbox (502 unknown), may the caller reach
 * that port (401, checked before anything reveals or changes state; see port-access.ts), is it running (502 paused
 * or auto-resume), is its Connect-Timeout-Ms valid (400), then stream it to the sandbox's own host. Upgrades
 * (WebSocket) take the same decisions and then become a tunnel.
 *
 * A catalog that answers synchronously (memory, file, or a Redis cache holding a settled lookup) is used without
 * a promise or a microtask hop; only lookups that really wait go through promises.
 */
export function createHandler(deps: HandlerDeps): GatewayHandlers {
  const { catalog, routing, forwarding, resumer, log } = deps;
  const tokens = new AccessTokenChecker();

  const internalError = (ex: Exchange) => (err: unknown) => {
    log(`internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    ex.fail({ message: 'internal gateway error', code: 500 });
  };

  function catalogUnavailable(ex: Exchange, sandboxID: string, err: unknown): void {
    log(`catalog lookup of ${sandboxID} failed: ${(err as Error).message}`);
    ex.fail({ sandboxID, message: 'the sandbox catalog is unavailable; try again shortly', code: 503 });
  }

  function handle(ex: Exchange): void {
    // The platform API checks its own key; the gateway only carries the request there.
    if (deps.api && isApiHost(ex.req.headers.host, routing.domain)) {
      ex.deliver(undefined, deps.api);
      return;
    }
    const route = decideRoute(ex.req.headers, ex.req.url, routing);
    if (!route.ok) {
      const signed = deps.signedUrlOwner && signedFilesQuery(ex.req.method, ex.req.url);
      if (signed && deps.signedUrlOwner) {
        deps
          .signedUrlOwner(signed)
          .then(
            async (owner) => {
              if (!owner) ex.fail({ message: 'signed URL refused: no sandbox signed it (changed, or its sandbox is gone)', code: 403 });
              else if (owner.expired) ex.fail({ sandboxID: owner.sandboxID, message: 'signed URL refused: it has expired', code: 403 });
              else proceed(ex, owner.sandboxID, undefined, await catalog.get(owner.sandboxID));
            },
            (err: unknown) => {
              log(`signed URL lookup failed: ${(err as Error).message}`);
              ex.fail({ message: 'the platform could not be asked which sandbox signed this URL; try again shortly', code: 503 });
            },
          )
          .catch(internalError(ex));
        return;
      }
      ex.fail({ message: route.message, code: route.status });
      return;
    }
    const { sandboxID } = route;
    let lookup: Lookup | Promise<Lookup>;
    try {
      lookup = catalog.get(sandboxID);
    } catch (err) {
      catalogUnavailable(ex, sandboxID, err);
      return;
    }
    if (isPromise(lookup)) {
      lookup
        .then(
          (entry) => proceed(ex, sandboxID, route.port, entry),
          (err: unknown) => catalogUnavailable(ex, sandboxID, err),
        )
        .catch(internalError(ex));
      return;
    }
    proceed(ex, sandboxID, route.port, lookup);
  }

  function proceed(ex: Exchange, sandboxID: string, port: number | undefined, entry: Lookup): void {
    if (!entry) {
      ex.fail(sandboxNotFound(sandboxID));
      return;
    }
    const signed = signedFilesQuery(ex.req.method, ex.req.url) !== undefined;
    const access = portAccess(ex.req.headers, entry, port, tokens, signed);
    if (!access.ok) {
      ex.fail(access.error);
      return;
    }
    const target = (e: CatalogEntry): ForwardTarget => sandboxTarget(e, access.port, access.dropped);
    if (entry.state === 'paused') {
      resumeIfAllowed(entry, ex)
        .then((running) => {
          if (running) ex.deliver(running, target(running));
        })
        .catch(internalError(ex));
      return;
    }
    ex.deliver(entry, target(entry));
  }

  async function resumeIfAllowed(entry: CatalogEntry, ex: Exchange): Promise<CatalogEntry | undefined> {
    const { sandboxID } = entry;
    if (!entry.autoResume) {
      ex.fail(sandboxPaused(sandboxID, 'resume it through the platform API (POST /sandboxes/{sandboxID}/resume) first'));
      return undefined;
    }
    if (!resumer) {
      ex.fail(sandboxPaused(sandboxID, 'it allows auto-resume, but this gateway has no way to resume sandboxes'));
      return undefined;
    }
    try {
      await resumer.resumeOnce(sandboxID);
      // The platform records "running" in the catalog; a file or Redis catalog shows it a moment later.
      const settleBy = Date.now() + RESUME_SETTLE_MS;
      for (;;) {
        const after = await catalog.get(sandboxID);
        if (!after) {
          ex.fail(sandboxNotFound(sandboxID));
          return undefined;
        }
        if (after.state === 'running') return after;
        if (Date.now() >= settleBy) {
          ex.fail(sandboxPaused(sandboxID, 'auto-resume finished but the catalog still says paused'));
          return undefined;
        }
        await sleep(50);
      }
    } catch (err) {
      log(`auto-resume of ${sandboxID} failed: ${(err as Error).message}`);
      ex.fail(sandboxPaused(sandboxID, `auto-resume failed: ${(err as Error).message}`));
      return undefined;
    }
  }

  function request(client: ClientExchange): void {
    const req = client.head;
    const ex: Exchange = {
      req,
      fail: (body) => client.fail(body),
      deliver: (_entry, target) => {
        if (client.destroyed || client.answered) return;
        const timeout = parseConnectTimeoutMs(req.headers[CONNECT_TIMEOUT_HEADER]);
        if (!timeout.ok) {
          client.fail({ sandboxID: target.sandboxID, message: timeout.message, code: 400 });
          return;
        }
        forward(client, target, forwarding, timeout.ms);
      },
    };
    try {
      handle(ex);
    } catch (err) {
      internalError(ex)(err);
    }
  }

  function upgrade(req: RequestHead, socket: Socket, head: Buffer): void {
    socket.on('error', () => {});
    const ex: Exchange = {
      req,
      fail: (body) => {
        if (socket.writable) socket.end(rawErrorFor(body));
        socket.destroy();
      },
      deliver: (_entry, target) => {
        if (socket.destroyed) return;
        tunnel(req, socket, head, target, { via: forwarding.via, connectTimeoutMs: forwarding.connectTimeoutMs });
      },
    };
    try {
      handle(ex);
    } catch (err) {
      internalError(ex)(err);
    }
  }

  return { request, upgrade };
}
