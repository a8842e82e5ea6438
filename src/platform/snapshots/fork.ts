/**
 * Fork: `count` new sandboxes from one sandbox's filesystem at one moment. The source is frozen only while its
 * changes are copied once; each fork then starts from its own copy of that, with its own ID, token, network and
 * limits. One result per fork, each the sandbox or the error that stopped it (E2B's SandboxForkResult).
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { ApiError } from '../http/types';
import { newSandboxID } from '../sandboxes/ids';
import type { SandboxRecord } from '../sandboxes/record';
import type { SandboxService } from '../sandboxes/service';
import { teamOf } from '../teams/model';

export type ForkResult = { record: SandboxRecord } | { error: { code: number; message: string } };

export async function forkSandbox(
  sandboxes: SandboxService,
  sourceID: string,
  count: number,
  timeoutSeconds: number,
  scratchDir: string,
): Promise<ForkResult[]> {
  fs.mkdirSync(scratchDir, { recursive: true, mode: 0o700 });
  const frozen = join(scratchDir, newSandboxID());
  const source = await sandboxes.copyChanges(sourceID, frozen);
  try {
    const template = sandboxes.templateOf(source);
    const results = await Promise.all(
      Array.from({ length: count }, () =>
        sandboxes
          .create(
            {
              templateID: source.templateID,
              timeout: timeoutSeconds,
              metadata: source.metadata,
              envVars: source.envVars,
              autoPause: source.autoPause,
              ...(source.autoPauseMemory === false ? { autoPauseMemory: false } : {}),
              autoResume: { enabled: source.autoResume },
              network: {
                ...(source.trafficAccessToken !== undefined ? { allowPublicTraffic: false } : {}),
                ...(source.httpsPorts !== undefined ? { httpsPorts: source.httpsPorts } : {}),
                ...(source.maskRequestHost !== undefined ? { maskRequestHost: source.maskRequestHost } : {}),
                ...(source.egress?.allowOut ? { allowOut: source.egress.allowOut } : {}),
                ...(source.egress?.denyOut ? { denyOut: source.egress.denyOut } : {}),
                ...(source.egress?.egressProxy ? { egressProxy: source.egress.egressProxy } : {}),
                ...(source.egress?.rules ? { rules: source.egress.rules } : {}),
              },
              ...(source.egress?.allowInternetAccess !== undefined ? { allow_internet_access: source.egress.allowInternetAccess } : {}),
              ...(source.volumeMounts ? { volumeMounts: source.volumeMounts.map(({ name, path }) => ({ name, path })) } : {}),
            },
            teamOf(source),
            { template, changesFrom: frozen },
          )
          .then(
            (record): ForkResult => ({ record }),
            (err: Error): ForkResult => ({
              error: { code: err instanceof ApiError ? err.code : 500, message: err.message },
            }),
          ),
      ),
    );
    // Over the team's quota, no fork is kept: the caller asked for `count`, and gets them all or a clear 429.
    const refused = results.find((r) => 'error' in r && r.error.code === 429);
    if (refused && 'error' in refused) {
      for (const r of results) if ('record' in r) await sandboxes.kill(r.record.sandboxID).catch(() => undefined);
      throw new ApiError(429, `${refused.error.message} (asked for ${count} forks; none was kept)`);
    }
    return results;
  } finally {
    fs.rmSync(frozen, { recursive: true, force: true });
  }
}
