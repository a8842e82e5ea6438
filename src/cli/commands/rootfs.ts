/**
 * `sandbox-kit rootfs [debian:<tag>...]` builds (or finds in the cache) the base root file systems of the built-in
 * templates, so tests and the platform start from a warm cache. Prints each path.
 */
import { parseFlags } from '../args';
import { debianSuite, MmdebstrapImages } from '../../runtime/base-images';

const HELP = `usage: sandbox-kit rootfs [--cache DIR] [debian:<tag>...]

Builds the base root file systems with mmdebstrap (default debian:bookworm) into the cache
(default $SANDBOX_KIT_CACHE or /var/cache/sandbox-kit) and prints their paths. A cached one is reused.`;

export async function run(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseFlags('rootfs', argv, { cache: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, true);
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  }
  if (parsed.values.help) {
    console.log(HELP);
    return 0;
  }
  const images = parsed.positionals.length > 0 ? parsed.positionals : ['debian:bookworm'];
  try {
    for (const image of images) debianSuite(image);
  } catch (err) {
    console.error(`rootfs: ${(err as Error).message}`);
    return 2;
  }
  const base = new MmdebstrapImages(parsed.values.cache ? { cacheRoot: parsed.values.cache } : {});
  for (const image of images) {
    const dir = await base.rootfs(image, (line) => console.error(`rootfs: ${line}`));
    console.log(dir);
  }
  return 0;
}
