/**
 * Which build a template reference means: `name:tag` the build that tag points at; `name` (or the template's ID) the
 * `default` tag's build, or, for a template built before tags existed (no tag at all), its last ready build. One rule
 * for creates, for `FROM template` in builds and for `Template.exists`. A team reaches its own templates and public
 * ones (store.findUsable).
 */
import { DEFAULT_TAG, parseTemplateRef } from './names';
import type { BuildRecord, TemplateRecord, TemplateStore } from './store';

export interface ResolvedRef {
  template: TemplateRecord;
  build: BuildRecord;
  /** The tag the reference named (or `default`). */
  tag: string;
}

export async function resolveRef(store: TemplateStore, teamID: string, ref: string): Promise<ResolvedRef | undefined> {
  const template = await store.findUsable(teamID, ref);
  if (!template) return undefined;
  let named: string | undefined;
  if (ref !== template.templateID) {
    const parsed = parseTemplateRef(ref);
    if (!parsed.ok) return undefined;
    named = parsed.tag;
  }
  const tag = named ?? DEFAULT_TAG;
  const tagged = await store.tag(template.templateID, tag);
  let buildID = tagged?.buildID;
  if (buildID === undefined && named === undefined && (await store.tags(template.templateID)).size === 0) buildID = template.readyBuildID;
  if (buildID === undefined) return undefined;
  const build = await store.getBuild(buildID);
  return build?.status === 'ready' ? { template, build, tag } : undefined;
}

/** Every reference a create accepts for this template: its ID and names (when `default` resolves), each `name:tag`. */
export async function refsOf(store: TemplateStore, t: TemplateRecord): Promise<string[]> {
  const tags = await store.tags(t.templateID);
  const refs: string[] = [];
  if (tags.has(DEFAULT_TAG) || (tags.size === 0 && t.readyBuildID !== undefined)) refs.push(t.templateID, ...t.names);
  for (const tag of tags.keys()) for (const name of t.names) refs.push(`${name}:${tag}`);
  return refs;
}
