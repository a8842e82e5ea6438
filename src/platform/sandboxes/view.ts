/** How a sandbox record looks on the wire (E2B's Sandbox, SandboxDetail and ListedSandbox shapes). */
import { ENVD_VERSION } from '../../contract/envd-version';
import type { SandboxRecord, SandboxState } from './record';

export interface ViewContext {
  /** The domain clients use for host-form sandbox URLs; null lets them keep their own. */
  domain: string | null;
  clientID: string;
}

function common(record: SandboxRecord, ctx: ViewContext) {
  return {
    sandboxID: record.sandboxID,
    templateID: record.templateID,
    ...(record.alias !== undefined ? { alias: record.alias } : {}),
    clientID: ctx.clientID,
    envdVersion: ENVD_VERSION,
    domain: ctx.domain,
    state: record.state as SandboxState,
    startedAt: record.startedAt,
    endAt: record.endAt,
    cpuCount: record.cpuCount,
    memoryMB: record.memoryMB,
    diskSizeMB: record.diskSizeMB ?? 0,
    metadata: record.metadata,
    lifecycle: { onTimeout: record.autoPause ? 'pause' : 'kill', autoResume: record.autoResume },
    volumeMounts: (record.volumeMounts ?? []).map((m) => ({ name: m.name, path: m.path })),
  };
}

/** Create, connect and get: everything, including the token the agent expects. */
export function sandboxDetail(record: SandboxRecord, ctx: ViewContext) {
  return {
    ...common(record, ctx),
    envdAccessToken: record.envdAccessToken,
    trafficAccessToken: record.trafficAccessToken ?? null,
    allowInternetAccess: record.egress?.allowInternetAccess !== false,
    network: {
      ...(record.egress?.allowOut ? { allowOut: record.egress.allowOut } : {}),
      ...(record.egress?.denyOut ? { denyOut: record.egress.denyOut } : {}),
      // The password stays with the platform, as on E2B.
      ...(record.egress?.egressProxy
        ? {
            egressProxy: {
              address: record.egress.egressProxy.address,
              ...(record.egress.egressProxy.username !== undefined ? { username: record.egress.egressProxy.username } : {}),
            },
          }
        : {}),
      // The rules as written: placeholders, never a secret's value.
      ...(record.egress?.rules ? { rules: record.egress.rules } : {}),
      allowPublicTraffic: record.trafficAccessToken === undefined,
      ...(record.maskRequestHost !== undefined ? { maskRequestHost: record.maskRequestHost } : {}),
      ...(record.httpsPorts !== undefined ? { httpsPorts: record.httpsPorts } : {}),
    },
  };
}

/** A list entry: no token (a list is for looking around, not for getting in). */
export function listedSandbox(record: SandboxRecord, ctx: ViewContext) {
  return common(record, ctx);
}
