/**
 * The operator's dashboard, served by the platform: `GET /dashboard` (the page, or the login form), `POST
 * /dashboard/login` (an API key in, a session cookie out), and the JSON the page polls: `GET /dashboard/api/state`
 * (sandboxes with their recent CPU and memory, templates with tags and builds, the proxy's addresses) and a build's
 * log from an offset. Read-only apart from the login. The JSON also answers an X-API-Key, for scripts.
 */
import type { IncomingMessage } from 'node:http';
import type { ApiKeyCheck } from '../http/server';
import { ApiError, type ApiRequest, type ApiResponse, type Route } from '../http/types';
import type { SandboxRecord } from '../sandboxes/record';
import type { UsageSampler } from '../sandboxes/usage-sampler';
import type { TemplateOverview } from '../templates/service';
import { loginPage, dashboardPage } from './page';
import { readProxyFacts } from './proxy-facts';
import { DashboardSessions } from './session';

/** Samples per sparkline: 5 minutes at one per 5 s. */
export const SPARKLINE_POINTS = 60;
const MAX_FORM_BYTES = 4096;

/** What the dashboard reads of the template builder (every team's: the dashboard is the operator's). */
export interface DashboardTemplates {
  overview(): Promise<TemplateOverview[]>;
  /** A build's status and its log entries from `offset` on. */
  buildLog(templateID: string, buildID: string, offset: number): Promise<{ status: string; entries: unknown[] }>;
}

export interface DashboardSources {
  apiKeys: ApiKeyCheck;
  sandboxes(): Promise<SandboxRecord[]>;
  usage: UsageSampler;
  templates?: DashboardTemplates;
  /** The JSON file with the proxy's ingress and egress addresses (proxy-facts.ts). */
  proxyFactsFile?: string;
}

const HTML = 'text/html; charset=utf-8';

function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
      if (body.length > MAX_FORM_BYTES) {
        req.destroy();
        reject(new ApiError(413, `the login form is larger than ${MAX_FORM_BYTES} bytes`));
      }
    });
    req.on('end', () => resolve(new URLSearchParams(body)));
    req.on('error', reject);
  });
}

export function dashboardRoutes(src: DashboardSources): Route[] {
  const sessions = new DashboardSessions();
  // The dashboard shows every team's sandboxes and templates: it is for the operator's (admin) keys only.
  const isAdminKey = async (key: string | string[] | undefined) => {
    if (typeof key !== 'string' || key === '') return false;
    const verdict = await src.apiKeys.check(key);
    return verdict.ok && verdict.caller.role === 'admin';
  };
  const signedIn = async (req: ApiRequest) => sessions.valid(req.raw.headers.cookie) || (await isAdminKey(req.raw.headers['x-api-key']));
  const guard = (handler: (req: ApiRequest) => Promise<ApiResponse>) => async (req: ApiRequest) => {
    if (!(await signedIn(req))) throw new ApiError(401, 'sign in at /dashboard with an admin API key of the platform (or send X-API-Key)');
    return handler(req);
  };

  async function state() {
    const records = await src.sandboxes();
    const sandboxes = records
      .filter((r) => r.state !== 'creating')
      .sort((a, b) => a.startedAt.localeCompare(b.startedAt))
      .map((r) => {
        const samples = src.usage.samples(r.sandboxID).slice(-SPARKLINE_POINTS);
        return {
          sandboxID: r.sandboxID,
          state: r.state,
          template: r.alias ?? r.templateID,
          startedAt: r.startedAt,
          endAt: r.endAt,
          cpuCount: r.cpuCount,
          memoryMB: r.memoryMB,
          cpu: samples.map((m) => m.cpuUsedPct),
          mem: samples.map((m) => Math.round((m.memUsed / m.memTotal) * 1000) / 10),
          latest: samples.at(-1) ?? null,
        };
      });
    const templates = src.templates ? await src.templates.overview() : [];
    const proxy = src.proxyFactsFile ? readProxyFacts(src.proxyFactsFile) : { problem: 'this platform was not told where the proxy is' };
    return { now: new Date().toISOString(), sandboxes, templates, proxy };
  }

  return [
    {
      method: 'GET',
      path: '/dashboard',
      auth: 'none',
      handler: async (req) => ({ status: 200, text: { contentType: HTML, body: (await signedIn(req)) ? dashboardPage() : loginPage('') } }),
    },
    {
      method: 'POST',
      path: '/dashboard/login',
      auth: 'none',
      rawBody: true,
      handler: async (req) => {
        const key = (await readForm(req.raw)).get('key') ?? '';
        if (!(await isAdminKey(key)))
          return { status: 401, text: { contentType: HTML, body: loginPage('That is not an admin API key of this platform.') } };
        return { status: 303, headers: { location: '/dashboard', 'set-cookie': sessions.issue() }, text: { contentType: HTML, body: '' } };
      },
    },
    {
      method: 'GET',
      path: '/dashboard/api/state',
      auth: 'none',
      handler: guard(async () => ({ status: 200, body: await state() })),
    },
    {
      method: 'GET',
      path: '/dashboard/api/templates/:templateID/builds/:buildID/logs',
      auth: 'none',
      handler: guard(async (req) => {
        if (!src.templates) throw new ApiError(404, 'this platform builds no templates');
        const raw = req.query.get('offset') ?? '0';
        if (!/^[0-9]{1,9}$/.test(raw)) throw new ApiError(400, `offset: expected a whole number (given ${JSON.stringify(raw)})`);
        return {
          status: 200,
          body: await src.templates.buildLog(req.params.templateID as string, req.params.buildID as string, Number(raw)),
        };
      }),
    },
  ];
}
