/**
 * Image references as Docker reads them (`python:3.12`, `ghcr.io/org/app@sha256:...`, `127.0.0.1:5000/lab/img:v1`):
 * a registry host (Docker Hub's `docker.io` when the first part names no host), a repository (`library/` added for
 * Docker Hub's one-part names), and a tag (`latest` when none) or a digest. Pure parsing; nothing is fetched.
 */

export interface ImageReference {
  /** `docker.io`, `ghcr.io`, `127.0.0.1:5000`, `[::1]:5000`. */
  registry: string;
  /** The host without its port (an IPv6 address without brackets). */
  host: string;
  /** `library/python`, `org/app`. */
  repository: string;
  tag?: string;
  /** `sha256:<64 hex>`. */
  digest?: string;
}

const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const DIGEST = /^sha256:[0-9a-f]{64}$/;
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

export const IMAGE_REFERENCE_RULE =
  '[registry[:port]/]repository[:tag][@sha256:<64 hex digits>], the repository of lower-case letters, digits and . _ - separated by /';

/** Whether the first part of a name is a registry host rather than a repository component (Docker's rule). */
function namesRegistry(first: string): boolean {
  return first.includes('.') || first.includes(':') || first === 'localhost' || /[A-Z]/.test(first) || first.startsWith('[');
}

/** `ref` parsed, or an error message that says what a reference looks like. */
export function parseImageReference(ref: string): { ok: true; ref: ImageReference } | { ok: false; message: string } {
  const bad = (why: string) => ({ ok: false as const, message: `image ${JSON.stringify(ref)}: ${why}; expected ${IMAGE_REFERENCE_RULE}` });
  const text = ref.trim();
  if (text === '' || text.length > 512) return bad('empty or longer than 512 characters');
  const at = text.indexOf('@');
  const namePart = at === -1 ? text : text.slice(0, at);
  const digest = at === -1 ? undefined : text.slice(at + 1);
  if (digest !== undefined && !DIGEST.test(digest)) return bad(`the digest ${JSON.stringify(digest)} is not sha256:<64 hex digits>`);
  const slash = namePart.indexOf('/');
  const first = slash === -1 ? '' : namePart.slice(0, slash);
  const hasRegistry = slash !== -1 && namesRegistry(first);
  const registryText = hasRegistry ? first : 'docker.io';
  let rest = hasRegistry ? namePart.slice(slash + 1) : namePart;
  let tag: string | undefined;
  const lastColon = rest.lastIndexOf(':');
  if (lastColon > rest.lastIndexOf('/')) {
    tag = rest.slice(lastColon + 1);
    rest = rest.slice(0, lastColon);
    if (!TAG.test(tag)) return bad(`the tag ${JSON.stringify(tag)} is not 1 to 128 letters, digits, _ . -`);
  }
  if (!HOST.test(registryText))
    return bad(`the registry ${JSON.stringify(registryText)} is not a host name or address with an optional port`);
  const registry = registryText === 'index.docker.io' || registryText === 'registry-1.docker.io' ? 'docker.io' : registryText;
  const components = rest.split('/');
  if (components.some((c) => !COMPONENT.test(c))) return bad(`the repository ${JSON.stringify(rest)} is not valid`);
  const repository = registry === 'docker.io' && components.length === 1 ? `library/${rest}` : rest;
  const parsed: ImageReference = { registry, host: hostOf(registry), repository };
  if (digest !== undefined) parsed.digest = digest;
  else parsed.tag = tag ?? 'latest';
  if (digest !== undefined && tag !== undefined) parsed.tag = tag;
  return { ok: true, ref: parsed };
}

/** The host of `registry` without a port, an IPv6 address unbracketed. */
export function hostOf(registry: string): string {
  if (registry.startsWith('[')) return registry.slice(1, registry.indexOf(']'));
  const colon = registry.lastIndexOf(':');
  return colon === -1 ? registry : registry.slice(0, colon);
}

/** `registry/repository:tag` or `registry/repository@digest` (the digest wins: a registry pins by it). */
export function canonicalReference(r: ImageReference): string {
  return `${r.registry}/${r.repository}${r.digest ? `@${r.digest}` : `:${r.tag ?? 'latest'}`}`;
}

/** The same image pinned to `digest`. */
export function pinnedReference(r: ImageReference, digest: string): string {
  return `${r.registry}/${r.repository}@${digest}`;
}

/** Whether the registry is on this machine's loopback: Docker allows plain HTTP there without configuration. */
export function isLoopbackRegistry(registry: string): boolean {
  const host = hostOf(registry).toLowerCase();
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Whether plain HTTP (and an unverified certificate) is allowed for `registry`: loopback, or listed as insecure. */
export function allowsInsecure(registry: string, insecureRegistries: readonly string[]): boolean {
  return isLoopbackRegistry(registry) || insecureRegistries.some((r) => r.toLowerCase() === registry.toLowerCase());
}

/** An AWS ECR registry host: `<account>.dkr.ecr.<region>.amazonaws.com` (also the .cn partition). */
export function ecrRegion(registry: string): string | undefined {
  return /^\d{12}\.dkr\.ecr(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$/.exec(registry)?.[1];
}

/** A Google Cloud registry host, which takes a service account key as the password of `_json_key`: Container Registry
 * (`gcr.io`, `<location>.gcr.io`) or Artifact Registry (`<location>-docker.pkg.dev`). */
export function isGcpRegistry(registry: string): boolean {
  return /^(?:[a-z0-9-]+\.)?gcr\.io$|^[a-z0-9-]+-docker\.pkg\.dev$/.test(registry.toLowerCase());
}
