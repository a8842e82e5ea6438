import * as fs from 'node:fs';
import * as path from 'node:path';

/** Where the template installs the catalog's npm servers (`mcp-gateway pull` installs there too). */
export const DEFAULT_SERVERS_DIR = '/opt/mcp-servers';

/**
 * Finds the file of `bin` of an npm package installed under `<dir>/node_modules`, trying each dir in turn.
 * Throws a message saying where it looked and how to install the package.
 */
export function binResolver(dirs: string[]) {
  return (pkg: string, bin: string): string => {
    for (const dir of dirs) {
      const root = path.join(dir, 'node_modules', pkg);
      let manifest: { bin?: string | Record<string, string>; name?: string };
      try {
        manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
      } catch {
        continue;
      }
      const target = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin?.[bin];
      if (target === undefined) throw new Error(`package ${pkg} in ${root} has no bin named ${bin}`);
      return path.join(root, target);
    }
    throw new Error(
      `package ${pkg} is not installed (looked in ${dirs.map((d) => path.join(d, 'node_modules')).join(', ')}); install it with \`mcp-gateway pull\``,
    );
  };
}
