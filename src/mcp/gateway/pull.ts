import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import type { Catalog } from '../catalog/schema';

/** The npm install specs (`package@version`) of the named catalog servers; unknown or non-npm names are errors. */
export function npmSpecs(names: string[], catalog: Catalog): string[] {
  const problems: string[] = [];
  const specs: string[] = [];
  const byName = new Map(
    Object.entries(catalog).flatMap(([name, e]) => [[name, e] as const, ...(e.aliases ?? []).map((a) => [a, e] as const)]),
  );
  for (const name of names) {
    const entry = byName.get(name);
    if (entry === undefined) problems.push(`${name}: not in the catalog`);
    else if (!('npm' in entry.run)) problems.push(`${name}: runs a command, nothing to install from npm`);
    else specs.push(entry.run.npm.version ? `${entry.run.npm.package}@${entry.run.npm.version}` : entry.run.npm.package);
  }
  if (problems.length > 0) throw new Error(`cannot pull: ${problems.join('; ')}`);
  return specs;
}

/** Installs catalog servers into `<dir>/node_modules` with npm (as `Template.addMcpServer` asks, at build time). */
export async function pullServers(names: string[], catalog: Catalog, dir: string): Promise<number> {
  const specs = npmSpecs(names, catalog);
  fs.mkdirSync(dir, { recursive: true });
  if (!fs.existsSync(`${dir}/package.json`)) fs.writeFileSync(`${dir}/package.json`, '{"private":true}\n');
  console.log(`mcp-gateway: installing ${specs.join(' ')} into ${dir}`);
  const code = await new Promise<number>((resolve) => {
    const npm = spawn('npm', ['install', '--no-audit', '--no-fund', '--omit=dev', '--prefix', dir, ...specs], { stdio: 'inherit' });
    npm.once('error', (err) => {
      console.error(`mcp-gateway: npm could not run: ${err.message}`);
      resolve(1);
    });
    npm.once('exit', (c) => resolve(c ?? 1));
  });
  return code === 0 ? 0 : 1;
}
