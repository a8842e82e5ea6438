/**
 * Image pull benchmark: a ~150 MB (compressed; ~410 MB unpacked) image, the cached Debian root file system as one
 * layer plus a small one on top, pushed to the lab's registry on loopback. Measured in the same run:
 *   - ours, cold: `pullImage` into an empty store (skopeo inspect + copy, umoci unpack per layer with the sandboxes'
 *     id mapping, whiteouts) — what a template build's base step does the first time;
 *   - the floor: `skopeo copy` into an OCI layout + `umoci unpack` of it with the same id mapping (the same tools,
 *     nothing of ours);
 *   - ours, cached: `pullImage` again (every layer in the store) — what every later build from the image costs.
 * Rounds alternate which side goes first. Reports medians and the ratios cold/floor and cached/floor.
 *
 *   node dist/scripts/bench/image-pull.js [--rounds 3] [--json FILE]
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { OciLayoutImages } from '../../src/lab/oci-images';
import { startLabRegistry } from '../../src/lab/registry';
import { MmdebstrapImages } from '../../src/runtime';
import { DEFAULT_ID_MAPPING } from '../../src/runtime/id-shift';
import { pullImage } from '../../src/runtime/images';
import { execOk } from '../../src/util/exec';

function log(msg: string): void {
  process.stderr.write(`image-pull: ${msg}\n`);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return (performance.now() - t) / 1000;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, json: { type: 'string' } } });
  const rounds = Number(values.rounds);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'sko-bench-'));
  const registry = await startLabRegistry({ dir: path.join(work, 'registry') });
  try {
    const rootfs = await new MmdebstrapImages().rootfs('debian:bookworm', log);
    const images = new OciLayoutImages(path.join(work, 'layout'));
    log('making the image (umoci insert of the Debian root file system; not timed)');
    await images.init('empty');
    await images.insert('empty', rootfs, '/', 'bench');
    const top = path.join(work, 'top');
    fs.mkdirSync(top);
    fs.writeFileSync(path.join(top, 'hello'), 'hello\n');
    await images.insert('bench', top, '/opt');
    const reference = `${registry.host}/bench/debian:1`;
    await images.push('bench', reference);
    const size = Number((await execOk(['du', '-sb', path.join(work, 'layout', 'blobs')])).split('\t')[0]) / 1e6;
    log(`pushed ${reference} (${size.toFixed(0)} MB of blobs)`);

    const m = DEFAULT_ID_MAPPING;
    const idMap = `0:${m.base}:${m.size}`;
    const result = { cold: [] as number[], floor: [] as number[], cached: [] as number[] };
    for (let r = 0; r < rounds; r++) {
      const store = path.join(work, `store-${r}`);
      const floorDir = path.join(work, `floor-${r}`);
      const ours = async () => {
        result.cold.push(await timed(() => pullImage(reference, { storeDir: store })));
        result.cached.push(await timed(() => pullImage(reference, { storeDir: store })));
      };
      const floor = async () => {
        result.floor.push(
          await timed(async () => {
            fs.mkdirSync(floorDir, { recursive: true });
            await execOk(
              [
                'skopeo',
                '--insecure-policy',
                'copy',
                '--quiet',
                '--src-tls-verify=false',
                `docker://${reference}`,
                `oci:${floorDir}/layout:img`,
              ],
              { timeoutMs: 600_000 },
            );
            await execOk(
              ['umoci', 'unpack', '--uid-map', idMap, '--gid-map', idMap, '--image', `${floorDir}/layout:img`, `${floorDir}/bundle`],
              {
                timeoutMs: 600_000,
              },
            );
          }),
        );
      };
      if (r % 2 === 0) {
        await ours();
        await floor();
      } else {
        await floor();
        await ours();
      }
      log(
        `round ${r + 1}: cold ${result.cold.at(-1)!.toFixed(2)} s, floor ${result.floor.at(-1)!.toFixed(2)} s, cached ${result.cached.at(-1)!.toFixed(3)} s`,
      );
      fs.rmSync(store, { recursive: true, force: true });
      fs.rmSync(floorDir, { recursive: true, force: true });
    }
    const summary = {
      image: { reference, blobsMB: Math.round(size) },
      rounds,
      coldSeconds: median(result.cold),
      floorSeconds: median(result.floor),
      cachedSeconds: median(result.cached),
      coldOverFloor: median(result.cold) / median(result.floor),
      cachedOverFloor: median(result.cached) / median(result.floor),
    };
    console.log(
      [
        `image: ${summary.image.blobsMB} MB of blobs (the Debian root file system + one small layer), ${rounds} rounds, medians`,
        `cold pullImage (skopeo inspect + copy, umoci unpack per layer, whiteouts): ${summary.coldSeconds.toFixed(2)} s`,
        `floor (skopeo copy + umoci unpack, same id mapping):                     ${summary.floorSeconds.toFixed(2)} s`,
        `cached pullImage (every layer in the store):                              ${summary.cachedSeconds.toFixed(3)} s`,
        `ratio cold / floor:   ${summary.coldOverFloor.toFixed(2)}`,
        `ratio cached / floor: ${summary.cachedOverFloor.toFixed(3)}`,
      ].join('\n'),
    );
    if (values.json) fs.writeFileSync(values.json, `${JSON.stringify(summary, null, 2)}\n`);
  } finally {
    await registry.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err: Error) => {
  console.error(`image-pull: ${err.message}`);
  process.exit(1);
});
