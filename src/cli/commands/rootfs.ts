/**
 * `sandbox-kit rootfs [debian:<tag>...]` builds (or finds in the cache) the base root file systems of the built-in
 * templates, so tests and the platform start from a warm cache. Prints each path.
 */
import { text } from '../../config';
import { parseFlags, valueFlag } from '../args';
import { debianSuite, MmdebstrapImages } from '../../runtime/base-images';

const HELP = `usage: sandbox-kit rootfs [--cache DIR] [debian:<tag>...]

Builds the base root file systems with mmdebstrap (default debian:bookworm) into the cache
(default $SANDBOX_KIT_CACHE or /var/cache/sandbox-kit) and prints their paths. A cached one is reused.`;

export async function run(argv: string[]): Promise<number> {
  const parsed = parseFlags(
    'rootfs',
    argv,
    { cache: valueFlag(text(/.+/, 'a directory').optional()) },
    { min: 0, max: 16, what: 'image names such as debian:bookworm' },
  );
  if (parsed.help) {
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
