/**
 * Snapshots of sandboxes: a copy of the filesystem changes frozen at one moment (the source keeps running or
 * paused), stored as a read-only layer over the source's own layers. Sandboxes are made from one by its ID or name
 * (the resolver), and it is deleted only when nothing is made from it.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { pageOf } from '../http/page-token';
import { ApiError } from '../http/types';
import { newSandboxID } from '../sandboxes/ids';
import type { SandboxService } from '../sandboxes/service';
import type { TemplateResolver } from '../sandboxes/template-resolver';
import { type Caller, mayAct, teamOf } from '../teams/model';
import { findSnapshot, SNAPSHOT_TAG } from './names';
import type { SnapshotRecord, SnapshotStore } from './store';
import type { QuotaLedger } from '../teams/quotas';
import { allocatedBytes } from '../../util/disk-usage';

export interface SnapshotListQuery {
  sandboxID?: string;
  name?: string;
  limit: number;
  nextToken?: string;
}

export class SnapshotService {
  constructor(
    private readonly store: SnapshotStore,
    private readonly sandboxes: SandboxService,
    /** Where the frozen copies live (one directory per snapshot). */
    private readonly dir: string,
    private readonly now: () => number = Date.now,
    /** Each snapshot's bytes are held of its team's stored bytes until it is deleted. */
    private readonly ledger?: QuotaLedger,
  ) {}

  async create(sandboxID: string, name?: string): Promise<SnapshotRecord> {
    const snapshotID = newSandboxID();
    const layerDir = join(this.dir, snapshotID);
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const source = await this.sandboxes.copyChanges(sandboxID, layerDir);
    try {
      const from = this.sandboxes.templateOf(source);
      const record: SnapshotRecord = {
        snapshotID,
        ...(name !== undefined ? { name } : {}),
        sandboxID,
        teamID: teamOf(source),
        createdAt: new Date(this.now()).toISOString(),
        layerDir,
        template: {
          ...from,
          templateID: snapshotID,
          buildID: snapshotID,
          layers: [layerDir, ...from.layers],
          ...(name !== undefined ? { alias: name } : {}),
          // Its sandboxes get the source's attached MCP images (from.attachedImages) and its gateway started again.
          fromSandboxFiles: true,
        },
      };
      if (name === undefined) delete record.template.alias;
      // Beyond the team's stored bytes, the 429 leaves nothing behind (the copy goes in the catch).
      await this.ledger?.reserve(record.teamID ?? teamOf(source), `bytes:snapshot:${snapshotID}`, {
        templateBytes: await allocatedBytes(layerDir),
      });
      await this.store.put(record);
      return record;
    } catch (err) {
      fs.rmSync(layerDir, { recursive: true, force: true });
      throw err;
    }
  }

  /** Newest first; `nextToken` continues after the last of the previous page. */
  async list(query: SnapshotListQuery, caller: Caller): Promise<{ page: SnapshotRecord[]; nextToken?: string }> {
    const matching = (await this.store.all())
      .filter((r) => mayAct(caller, teamOf(r)))
      .filter((r) => query.sandboxID === undefined || r.sandboxID === query.sandboxID)
      .filter((r) => query.name === undefined || r.name === query.name || `${r.name}:${SNAPSHOT_TAG}` === query.name);
    return pageOf(matching, (r) => ({ at: r.createdAt, id: r.snapshotID }), {
      limit: query.limit,
      direction: -1,
      ...(query.nextToken !== undefined ? { nextToken: query.nextToken } : {}),
    });
  }

  /** Among the snapshots of the teams `may` accepts: another team's snapshot is as unknown as a missing one. */
  private async find(ref: string, may: (teamID: string) => boolean): Promise<SnapshotRecord | undefined> {
    return findSnapshot(
      (await this.store.all()).filter((r) => may(teamOf(r))),
      ref,
    );
  }

  /** false when the caller has no such snapshot; 409 while a sandbox or another snapshot is made from it. */
  async delete(ref: string, caller: Caller): Promise<boolean> {
    const record = await this.find(ref, (teamID) => mayAct(caller, teamID));
    if (!record) return false;
    const users = [
      ...(await this.sandboxes.all()).filter((s) => s.layers?.includes(record.layerDir)).map((s) => `sandbox ${s.sandboxID}`),
      ...(await this.store.all())
        .filter((s) => s.snapshotID !== record.snapshotID && s.template.layers.includes(record.layerDir))
        .map((s) => `snapshot ${s.snapshotID}`),
    ];
    if (users.length > 0)
      throw new ApiError(409, `snapshot ${JSON.stringify(ref)} is in use by ${users.join(', ')}: kill or delete those first`);
    await this.store.delete(record.snapshotID);
    fs.rmSync(record.layerDir, { recursive: true, force: true });
    await this.ledger?.release(teamOf(record), `bytes:snapshot:${record.snapshotID}`);
    return true;
  }

  /** Sandboxes are made from a snapshot by its ID or name, as from a template. */
  resolver(): TemplateResolver {
    return {
      resolve: async (ref, teamID) => (await this.find(ref, (owner) => owner === teamID))?.template,
      names: async () => (await this.store.all()).flatMap((r) => [r.snapshotID, ...(r.name !== undefined ? [r.name] : [])]),
    };
  }
}
