/** `sandbox-kit gc`: one storage collection on the platform now (POST /admin/gc); prints what went and the bytes freed. */
import { adminCall, adminTarget, TARGET_HELP } from '../admin/target';
import { targetFlags } from '../admin/flags';
import { parseFlags } from '../args';
import type { GcReport } from '../../platform/storage';

const HELP = `usage: sandbox-kit gc

Removes now what the platform's periodic collection (gc.intervalSeconds) would: the template layers, COPY uploads
and pulled image layers that no template tag or ready build, no running or paused sandbox, no snapshot and no build
under way uses, once unchanged for gc.keepUnusedSeconds (docs/templates.md#storage). Prints what was removed and the
bytes freed.

${TARGET_HELP}
--json prints the platform's report as JSON.`;

export async function run(argv: string[]): Promise<number> {
  const { values, help } = parseFlags('gc', argv, targetFlags);
  if (help) {
    console.log(HELP);
    return 0;
  }
  const report = (await adminCall(adminTarget(values), 'POST', '/admin/gc')) as GcReport;
  if (values.json) {
    console.log(JSON.stringify(report, null, 2));
    return 0;
  }
  const removed = Object.entries(report.removed).map(([kind, n]) => `${n} ${kind}`);
  console.log(`removed ${removed.join(', ')}`);
  console.log(`freed ${report.bytesFreed} bytes (${(report.bytesFreed / 1048576).toFixed(1)} MiB) in ${report.seconds.toFixed(1)} s`);
  console.log(
    `kept ${report.kept.layers} layers, ${report.kept.imageLayers} image layers, ${report.kept.imageCopies} image copies, ${report.kept.uploads} uploads`,
  );
  for (const s of report.skipped) console.log(`skipped ${s}`);
  return 0;
}
