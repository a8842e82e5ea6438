import type { IncomingMessage, ServerResponse } from 'node:http';
import { accessTokenMatches } from './access-token';
import type { CatalogEntry } from './catalog/entry';
import type { Catalog } from './catalog/types';
import { accessDenied, sandboxNotFound, sandboxPaused, sendError } from './error-response';
import { forward, type ForwardSettings } from './forward';
import type { SingleFlightResumer } from './resume';
import { decideRoute, parseConnectTimeoutMs, type RoutingSettings } from './routing';

/** How long the catalog may take to show a resumed sandbox as running. */
const RESUME_SETTLE_MS = 5000;

export interface HandlerDeps {
  catalog: Catalog;
  routing: RoutingSettings;
  forwarding: ForwardSettings;
  resumer: SingleFlightResumer | undefined;
  log: (line: string) => void;
}

/**
 * The gateway's decision for one request, in order: where to (400), which sandbox (502 unknown),
 * may the caller (401, checked before anything reveals or changes state), is it running (502 paused or
 * auto-resume), then stream it to the sandbox's own host.
 */
export function createHandler(deps: HandlerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { catalog, routing, forwarding, resumer, log } = deps;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const route = decideRoute(req.headers, req.url, routing);
    if (!route.ok) {
      sendError(res, { message: route.message, code: route.status });
      return;
    }
    const { sandboxID } = route;
    let entry: CatalogEntry | undefined;
    try {
      entry = await catalog.get(sandboxID);
    } catch (err) {
      log(`catalog lookup of ${sandboxID} failed: ${(err as Error).message}`);
      sendError(res, { sandboxID, message: 'the sandbox catalog is unavailable; try again shortly', code: 503 });
      return;
    }
    if (!entry) {
      sendError(res, sandboxNotFound(sandboxID));
      return;
    }
    const token = req.headers['x-access-token'];
    if (!accessTokenMatches(token, entry.tokenHash)) {
      sendError(res, accessDenied(sandboxID, token !== undefined && token !== ''));
      return;
    }
    if (entry.state === 'paused') {
      const running = await resumeIfAllowed(entry, res);
      if (!running) return;
      entry = running;
    }
    forward(req, res, { sandboxID, host: entry.host, port: route.port ?? entry.agentPort }, forwarding, parseConnectTimeoutMs(req.headers['connect-timeout-ms']));
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
        await new Promise((r) => setTimeout(r, 50));
      }
    } catch (err) {
      log(`auto-resume of ${sandboxID} failed: ${(err as Error).message}`);
      sendError(res, sandboxPaused(sandboxID, `auto-resume failed: ${(err as Error).message}`));
      return undefined;
    }
  }

  return (req, res) => {
    handle(req, res).catch((err: unknown) => {
      log(`internal error: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
      sendError(res, { message: 'internal gateway error', code: 500 });
    });
  };
}
