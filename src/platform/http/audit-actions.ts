/**
 * What the audit trail calls each request: the changes (creates, connects, pauses, resumes, kills, builds, deletes,
 * and the administration) by name; reads are not recorded. Pure: from the route's method and path pattern.
 */
/** One change as the API server reports it to the audit trail (the teams keep it). */
export interface AuditEntry {
  /** ISO-8601 UTC. */
  at: string;
  teamID: string;
  keyID: string;
  /** e.g. sandbox.create, sandbox.kill, template.build, key.revoke */
  action: string;
  /** The resource acted on (sandbox ID, template ID, key ID, team ID), empty when there is none. */
  target: string;
  /** The client's address as the platform saw it. */
  from: string;
  /** The HTTP status the request was answered with. */
  status: number;
}

const ACTIONS: Record<string, string> = {
  'POST /v2/sandboxes': 'sandbox.create',
  'POST /v2/sandboxes/:sandboxID/connect': 'sandbox.connect',
  'POST /sandboxes/:sandboxID/resume': 'sandbox.resume',
  'POST /sandboxes/:sandboxID/pause': 'sandbox.pause',
  'POST /sandboxes/:sandboxID/timeout': 'sandbox.timeout',
  'DELETE /sandboxes/:sandboxID': 'sandbox.kill',
  'POST /v3/templates': 'template.create',
  'POST /v2/templates/:templateID/builds/:buildID': 'template.build',
  'PATCH /v2/templates/:templateID': 'template.update',
  'DELETE /templates/:templateID': 'template.delete',
  'POST /admin/teams': 'team.create',
  'PUT /admin/teams/:team/quotas': 'team.quotas',
  'DELETE /admin/teams/:team': 'team.delete',
  'POST /admin/keys': 'key.create',
  'DELETE /admin/keys/:keyID': 'key.revoke',
  'POST /admin/gc': 'storage.gc',
  'POST /secrets': 'secret.create',
  'POST /secrets/:secretID': 'secret.update',
  'DELETE /secrets/:secretID': 'secret.destroy',
};

/** The action name of a keyed request, or undefined for one that changes nothing (GET). */
export function auditAction(method: string, routePath: string): string | undefined {
  if (method === 'GET') return undefined;
  return ACTIONS[`${method} ${routePath}`] ?? `${method} ${routePath}`;
}

const TARGET_FIELDS = ['sandboxID', 'templateID', 'secretID', 'keyID', 'teamID', 'team'] as const;

/** The resource a request acted on: named in its path, or, for a create, in its answer. */
export function auditTarget(params: Record<string, string>, answer: unknown): string {
  for (const f of TARGET_FIELDS) if (params[f] !== undefined) return params[f];
  if (typeof answer === 'object' && answer !== null) {
    const a = answer as Record<string, unknown>;
    for (const f of TARGET_FIELDS) if (typeof a[f] === 'string') return a[f];
  }
  return '';
}
