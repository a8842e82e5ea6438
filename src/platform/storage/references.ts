/**
 * What stored files are still referenced (docs/templates.md#storage), as pure functions of the records: a template's
 * builds that a tag or its ready build points at, every running or paused sandbox's layers (the collector gives a
 * record that names none its build's), every snapshot's layers. A COPY upload is referenced by a kept build that
 * copied it; a sandbox never reads an upload.
 */
import type { BuildRecord, TagRecord, TemplateRecord } from '../templates/store';
import { teamOf } from '../teams/model';
import { resolve } from 'node:path';

export interface TemplateRefs {
  template: TemplateRecord;
  tags: ReadonlyMap<string, TagRecord>;
}

/** The builds a create or a `fromTemplate` may still start from: every tag's, and each template's ready one. */
export function keptBuildIDs(templates: readonly TemplateRefs[]): Set<string> {
  const kept = new Set<string>();
  for (const { template, tags } of templates) {
    if (template.readyBuildID !== undefined) kept.add(template.readyBuildID);
    for (const t of tags.values()) kept.add(t.buildID);
  }
  return kept;
}

export interface LiveReferences {
  /** Layer directories, resolved. */
  layers: Set<string>;
  /** `<teamID>:<files hash>` of the uploads kept builds copied. */
  uploads: Set<string>;
}

export function uploadKey(teamID: string, hash: string): string {
  return `${teamID}:${hash}`;
}

export function liveReferences(
  keptBuilds: readonly BuildRecord[],
  sandboxes: ReadonlyArray<{ layers?: string[] }>,
  snapshots: ReadonlyArray<{ layerDir: string; template: { layers: string[] } }>,
): LiveReferences {
  const layers = new Set<string>();
  const uploads = new Set<string>();
  const add = (list: readonly string[] | undefined) => {
    for (const l of list ?? []) layers.add(resolve(l));
  };
  for (const b of keptBuilds) {
    add(b.layers);
    for (const step of b.steps ?? []) if (step.type === 'COPY' && step.filesHash) uploads.add(uploadKey(teamOf(b), step.filesHash));
  }
  for (const s of sandboxes) add(s.layers);
  for (const s of snapshots) add([s.layerDir, ...s.template.layers]);
  return { layers, uploads };
}
