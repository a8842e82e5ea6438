import * as path from 'node:path';
import type { Catalog, CatalogEntry, CatalogProperty } from '../catalog/schema';
import type { CustomServer, ValidMcpConfig } from '../config/validate';
import { ImagePulling, type ResolvedImage } from './image-dir';
import { fill, fillArgs, fillRecord } from './template';

/** How to start one server: the process, its extra env, files to write first (0600) and a command to run before. */
export interface LaunchPlan {
  name: string;
  command: string;
  args: string[];
  /** Added to the minimal inherited env (PATH, HOME, ...). Secrets travel here or in `files`, never in `args`. */
  env: Record<string, string>;
  files: { path: string; content: string }[];
  cwd: string;
  /** A shell command run to completion before the server starts (custom servers' installCmd). */
  installCmd?: string;
  /** A server served over HTTP by its vendor: the gateway connects to it instead of starting a process. */
  remote?: { url: string; transport: 'sse' | 'streamable-http'; headers: Record<string, string> };
}

export interface PlanOptions {
  /** Absolute path of the node binary that runs npm servers (the gateway's own). */
  node: string;
  /** Where the bin script of an npm package is: resolves `package` + `bin` to a file (throws if not installed). */
  resolveBin(pkg: string, bin: string): string;
  /** A private directory (0700) for per-server working dirs and config files. */
  stateDir: string;
  /** Where an image server's image is: its filesystem and what runs (throws, with the reason, if not there). */
  resolveImage?(ref: string): ResolvedImage;
  /** chroot(8), which enters an image's filesystem (the sandbox's root holds CAP_SYS_CHROOT). */
  chroot?: string;
}

function asText(value: unknown, separator = ','): string {
  return Array.isArray(value) ? value.map(String).join(separator) : String(value);
}

function delivered(entry: CatalogEntry, values: Record<string, unknown>, configPath: string) {
  const args: string[] = [];
  const env: Record<string, string> = {};
  const fileDoc: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(entry.properties) as [string, CatalogProperty][]) {
    const value = values[name];
    if (value === undefined) continue;
    const via = property.via;
    switch (via.kind) {
      case 'env':
        env[via.name] = asText(value, via.separator);
        break;
      case 'args':
        args.push(...(Array.isArray(value) ? value.map(String) : [String(value)]));
        break;
      case 'flag':
        if (value === true) args.push(via.flag);
        else if (value === false) break;
        else for (const item of Array.isArray(value) ? value : [value]) args.push(via.flag, String(item));
        break;
      case 'file':
        fileDoc[via.key] = value;
        break;
    }
  }
  const files: LaunchPlan['files'] = [];
  if (Object.keys(fileDoc).length > 0 && entry.configFile !== undefined) {
    files.push({ path: configPath, content: `${JSON.stringify(fileDoc, null, 2)}\n` });
    if (entry.configFile.env !== undefined) env[entry.configFile.env] = configPath;
    if (entry.configFile.flag !== undefined) args.push(entry.configFile.flag, configPath);
  }
  return { args, env, files };
}

function catalogPlan(name: string, entry: CatalogEntry, values: Record<string, unknown>, options: PlanOptions): LaunchPlan {
  const cwd = path.join(options.stateDir, 'servers', name);
  const { args, env, files } = delivered(entry, values, path.join(cwd, 'config.json'));
  if ('npm' in entry.run) {
    const { package: pkg, bin, args: fixed } = entry.run.npm;
    return { name, command: options.node, args: [options.resolveBin(pkg, bin), ...fixed, ...args], env, files, cwd };
  }
  if ('image' in entry.run) return imagePlan(name, entry.run.image, values, { args, env, files, cwd }, options);
  if ('remote' in entry.run) {
    const { url, transport, headers } = entry.run.remote;
    const filledUrl = fill(url, values);
    if (filledUrl === undefined) throw new Error(`the URL ${url} names a property that is not set`);
    return {
      name,
      command: '',
      args: [],
      env: {},
      files: [],
      cwd,
      remote: { url: filledUrl, transport, headers: fillRecord(headers, values) },
    };
  }
  const [command, ...fixed] = entry.run.command;
  return { name, command, args: [...fixed, ...args], env, files, cwd };
}

/**
 * An image server: its entrypoint run inside its own filesystem (chroot) with the image's env, the entry's env and
 * the configured values; the entry's arguments replace the image's command, as `docker run IMAGE ARGS` does. The
 * image's working dir is entered through its /bin/sh when it has one.
 */
function imagePlan(
  name: string,
  run: { ref: string; args: string[]; env: Record<string, string> },
  values: Record<string, unknown>,
  delivered: { args: string[]; env: Record<string, string>; files: LaunchPlan['files']; cwd: string },
  options: PlanOptions,
): LaunchPlan {
  if (options.resolveImage === undefined) throw new Error(`image ${run.ref}: this gateway runs no images`);
  const image = options.resolveImage(run.ref);
  const imageEnv: Record<string, string> = {};
  for (const line of image.env) {
    const eq = line.indexOf('=');
    if (eq > 0) imageEnv[line.slice(0, eq)] = line.slice(eq + 1);
  }
  const configured = [...fillArgs(run.args, values), ...delivered.args];
  const argv = [...image.entrypoint, ...(run.args.length > 0 || delivered.args.length > 0 ? configured : image.cmd)];
  if (argv.length === 0) throw new Error(`image ${run.ref} has neither an entrypoint nor a command`);
  const enter =
    image.workingDir && image.workingDir !== '/' && image.hasShell ? ['/bin/sh', '-c', 'cd "$0" && exec "$@"', image.workingDir] : [];
  return {
    name,
    command: options.chroot ?? '/usr/sbin/chroot',
    args: [image.rootfs, ...enter, ...argv],
    env: { ...imageEnv, ...fillRecord(run.env, values), ...delivered.env },
    files: delivered.files,
    cwd: delivered.cwd,
  };
}

function customPlan(name: string, server: CustomServer, options: PlanOptions): LaunchPlan {
  // The user's own command line: run by a shell, as written. Its envs are passed as env, never spliced into it.
  return {
    name,
    command: '/bin/sh',
    args: ['-c', server.runCmd],
    env: { ...(server.envs ?? {}) },
    files: [],
    cwd: path.join(options.stateDir, 'custom', name),
    installCmd: server.installCmd,
  };
}

/** A server with no plan: why, and whether only because its image is still being pulled (planned again later). */
export interface UnplannedServer {
  name: string;
  error: string;
  pulling?: boolean;
}

/**
 * Turns a validated config into launch plans, one per server, in config order (catalog servers, then custom).
 * Pure apart from `resolveBin`; a server whose package is not installed gets a plan whose failure is reported.
 */
export function planLaunches(config: ValidMcpConfig, catalog: Catalog, options: PlanOptions): (LaunchPlan | UnplannedServer)[] {
  const plans: (LaunchPlan | UnplannedServer)[] = [];
  for (const [name, values] of Object.entries(config.servers)) {
    try {
      plans.push(catalogPlan(name, catalog[name], values, options));
    } catch (err) {
      plans.push({ name, error: (err as Error).message, ...(err instanceof ImagePulling ? { pulling: true } : {}) });
    }
  }
  for (const [name, server] of Object.entries(config.custom)) plans.push(customPlan(name, server, options));
  return plans;
}
