import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Catalog } from '../catalog/schema';
import { PREINSTALL_FILE } from '../launch/image-dir';

/** What preinstalling catalog servers takes: npm install specs (`package@version`) and OCI image references. */
export interface InstallPlan {
  npm: string[];
  images: string[];
}

/**
 * What the named catalog servers need preinstalled: an npm server its package, an image server its image (placed by
 * the template builder). Unknown names, commands and remote servers (nothing to install) are errors, all at once.
 */
export function installPlan(names: string[], catalog: Catalog): InstallPlan {
  const problems: string[] = [];
  const plan: InstallPlan = { npm: [], images: [] };
  const byName = new Map(
    Object.entries(catalog).flatMap(([name, e]) => [[name, e] as const, ...(e.aliases ?? []).map((a) => [a, e] as const)]),
  );
  for (const name of names) {
    const entry = byName.get(name);
    if (entry === undefined) problems.push(`${name}: not in the catalog`);
    else if ('npm' in entry.run) {
      const spec = entry.run.npm.version ? `${entry.run.npm.package}@${entry.run.npm.version}` : entry.run.npm.package;
      if (!plan.npm.includes(spec)) plan.npm.push(spec);
    } else if ('image' in entry.run) {
      if (!plan.images.includes(entry.run.image.ref)) plan.images.push(entry.run.image.ref);
    } else if ('remote' in entry.run) problems.push(`${name}: served by its vendor over HTTP, nothing to install`);
    else problems.push(`${name}: runs a command, nothing to install`);
  }
  if (problems.length > 0) throw new Error(`cannot pull: ${problems.join('; ')}`);
  return plan;
}

/**
 * Installs catalog servers (as `Template.addMcpServer` asks, at build time): npm servers into `<dir>/node_modules`
 * with npm; image servers are added to the template's preinstall list, which the kit's template builder fetches at
 * the end of the build.
 */
export async function pullServers(names: string[], catalog: Catalog, dir: string, preinstallFile = PREINSTALL_FILE): Promise<number> {
  const plan = installPlan(names, catalog);
  if (plan.images.length > 0) {
    fs.mkdirSync(path.dirname(preinstallFile), { recursive: true });
    fs.appendFileSync(preinstallFile, plan.images.map((ref) => `${ref}\n`).join(''));
    console.log(
      `mcp-gateway: ${plan.images.join(' ')} added to ${preinstallFile}; the template builder places them at the end of the build`,
    );
  }
  if (plan.npm.length === 0) return 0;
  fs.mkdirSync(dir, { recursive: true });
  if (!fs.existsSync(`${dir}/package.json`)) fs.writeFileSync(`${dir}/package.json`, '{"private":true}\n');
  console.log(`mcp-gateway: installing ${plan.npm.join(' ')} into ${dir}`);
  const code = await new Promise<number>((resolve) => {
    const npm = spawn('npm', ['install', '--no-audit', '--no-fund', '--omit=dev', '--prefix', dir, ...plan.npm], { stdio: 'inherit' });
    npm.once('error', (err) => {
      console.error(`mcp-gateway: npm could not run: ${err.message}`);
      resolve(1);
    });
    npm.once('exit', (c) => resolve(c ?? 1));
  });
  return code === 0 ? 0 : 1;
}
