import type { IncomingMessage, ServerResponse } from 'node:http';
import { AccessTokenChecker } from '../contract/access-token';
import { CONNECT_TIMEOUT_HEADER, parseConnectTimeoutMs } from '../contract/connect-timeout';
import type { CatalogEntry } from '../catalog/entry';
import type { Catalog } from '../catalog/types';
import { accessDenied, sandboxNotFound, sandboxPaused, sendError } from './error-response';
import { forward, type ForwardSettings } from './forward';
import type { SingleFlightResumer } from './resume';
import { decideRoute, type RoutingSettings } from './routing';
import { sleep } from '../util/poll';

/** How long the catalog may take to show a resumed sandbox as running. */
const RESUME_SETTLE_MS = 5000;

export interface HandlerDeps {
  catalog: Catalog;
  routing: RoutingSettings;
  forwarding: ForwardSettings;
  resumer: SingleFlightResumer | undefined;
  log: (line: string) => void;
}

type Lookup = CatalogEntry | undefined;

function isPromise(value: Lookup | Promise<Lookup>): value is Promise<Lookup> {
  return typeof (value as Promise<Lookup> | undefined)?.then === 'function';
}

/**
 * The gateway's decision for one request, in order: where to (400), which sandbox (502 unknown),
 * may the caller (401, checked before anything reveals or changes state), is it running (502 paused or
 * auto-resume), is its Connect-Timeout-Ms valid (400), then stream it to the sandbox's own host.
 *
 * A catalog that answers synchronously (memory, file, or a Redis cache holding a settled lookup) is used without
 * a promise or a microtask hop; only lookups that really wait go through promises.
 */
export function createHandler(deps: HandlerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { catalog, routing, forwarding, resumer, log } = deps;
  const tokens = new AccessTokenChecker();

  const internalError = (res: ServerResponse) => (err: unknown) => {
    log(`internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    sendError(res, { message: 'internal gateway error', code: 500 });
  };

  function catalogUnavailable(res: ServerResponse, sandboxID: string, err: unknown): void {
    log(`catalog lookup of ${sandboxID} failed: ${(err as Error).message}`);
    sendError(res, { sandboxID, message: 'the sandbox catalog is unavailable; try again shortly', code: 503 });
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const route = decideRoute(req.headers, req.url, routing);
    if (!route.ok) {
      sendError(res, { message: route.message, code: route.status });
      return;
    }
    const { sandboxID } = route;
    let lookup: Lookup | Promise<Lookup>;
    try {
      lookup = catalog.get(sandboxID);
    } catch (err) {
      catalogUnavailable(res, sandboxID, err);
      return;
    }
    if (isPromise(lookup)) {
      lookup
        .then(
          (entry) => proceed(req, res, sandboxID, route.port, entry),
          (err: unknown) => catalogUnavailable(res, sandboxID, err),
        )
        .catch(internalError(res));
      return;
    }
    proceed(req, res, sandboxID, route.port, lookup);
  }

  function proceed(req: IncomingMessage, res: ServerResponse, sandboxID: string, port: number | undefined, entry: Lookup): void {
    if (!entry) {
      sendError(res, sandboxNotFound(sandboxID));
      return;
    }
    const verdict = tokens.check(req.headers['x-access-token'], entry.tokenHash);
    if (verdict !== 'ok') {
      sendError(res, accessDenied(sandboxID, verdict));
      return;
    }
    if (entry.state === 'paused') {
      resumeIfAllowed(entry, res)
        .then((running) => {
          if (running) send(req, res, sandboxID, port, running);
        })
        .catch(internalError(res));
      return;
    }
    send(req, res, sandboxID, port, entry);
  }

  function send(req: IncomingMessage, res: ServerResponse, sandboxID: string, port: number | undefined, entry: CatalogEntry): void {
    const timeout = parseConnectTimeoutMs(req.headers[CONNECT_TIMEOUT_HEADER]);
    if (!timeout.ok) {
      sendError(res, { sandboxID, message: timeout.message, code: 400 });
      return;
    }
    forward(req, res, { sandboxID, host: entry.host, port: port ?? entry.agentPort }, forwarding, timeout.ms);
  }

  async function resumeIfAllowed(entry: CatalogEntry, res: ServerResponse): Promise<CatalogEntry | undefined> {
    const { sandboxID } = entry;
    if (!entry.autoResume) {
      sendError(res, sandboxPaused(sandboxID, 'resume it through the platform API (POST /sandboxes/{sandboxID}/resume) first'));
      return undefined;
    }
    if (!resumer) {
      sendError(res, sandboxPaused(sandboxID, 'it allows auto-resume, but this gateway has no way to resume sandboxes'));
      return undefined;
    }
    try {
      await resumer.resumeOnce(sandboxID);
      // The platform records "running" in the catalog; a file or Redis catalog shows it a moment later.
      const settleBy = Date.now() + RESUME_SETTLE_MS;
      for (;;) {
        const after = await catalog.get(sandboxID);
        if (!after) {
          sendError(res, sandboxNotFound(sandboxID));
          return undefined;
        }
        if (after.state === 'running') return after;
        if (Date.now() >= settleBy) {
          sendError(res, sandboxPaused(sandboxID, 'auto-resume finished but the catalog still says paused'));
          return undefined;
        }
        await sleep(50);
      }
    } catch (err) {
      log(`auto-resume of ${sandboxID} failed: ${(err as Error).message}`);
      sendError(res, sandboxPaused(sandboxID, `auto-resume failed: ${(err as Error).message}`));
      return undefined;
    }
  }

  return (req, res) => {
    try {
      handle(req, res);
    } catch (err) {
      internalError(res)(err);
    }
  };
}
