/**
 * The parts of an OCI image configuration a sandbox uses (Env, WorkingDir, User, Entrypoint, Cmd) and the ones a
 * pull checks (platform, the layers' uncompressed digests). Pure parsing of the config blob.
 */

export interface ImageConfig {
  os: string;
  architecture: string;
  /** `Env` as a map; a later duplicate wins, as in a container's environment. */
  env: Record<string, string>;
  workingDir?: string;
  user?: string;
  entrypoint?: string[];
  cmd?: string[];
  /** `rootfs.diff_ids`: one per layer, bottom first. */
  diffIds: string[];
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;

function strings(v: unknown): string[] | undefined {
  return Array.isArray(v) && v.every((s) => typeof s === 'string') && v.length > 0 ? (v as string[]) : undefined;
}

/** Parses an image config blob; throws with what is wrong when it is not one. */
export function parseImageConfig(text: string): ImageConfig {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error('the image config is not JSON');
  }
  const c = (raw.config ?? {}) as Record<string, unknown>;
  const rootfs = (raw.rootfs ?? {}) as Record<string, unknown>;
  const diffIds = strings(rootfs.diff_ids) ?? [];
  if (diffIds.some((d) => !DIGEST.test(d))) throw new Error('the image config names a layer digest that is not sha256:<64 hex digits>');
  const env: Record<string, string> = {};
  for (const pair of strings(c.Env) ?? []) {
    const eq = pair.indexOf('=');
    if (eq > 0) env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  const config: ImageConfig = {
    os: typeof raw.os === 'string' ? raw.os : '',
    architecture: typeof raw.architecture === 'string' ? raw.architecture : '',
    env,
    diffIds,
  };
  if (typeof c.WorkingDir === 'string' && c.WorkingDir !== '') config.workingDir = c.WorkingDir;
  if (typeof c.User === 'string' && c.User !== '') config.user = c.User;
  const entrypoint = strings(c.Entrypoint);
  if (entrypoint) config.entrypoint = entrypoint;
  const cmd = strings(c.Cmd);
  if (cmd) config.cmd = cmd;
  return config;
}
