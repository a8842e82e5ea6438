/**
 * The host admission (src/runtime/admission.ts) a benchmark runs with: room for `n` sandboxes of 512 MB and one CPU
 * each, which idle far below both; never less than the platform's defaults.
 */
import * as os from 'node:os';
import { type AdmissionLimits, DEFAULT_ADMISSION } from '../../src/runtime/admission';

const MiB = 1024 * 1024;

export function admissionFor(n: number): Pick<AdmissionLimits, 'memoryOvercommit' | 'cpuOvercommit'> {
  return {
    memoryOvercommit: Math.max(DEFAULT_ADMISSION.memoryOvercommit, Math.ceil((n * 512) / (os.totalmem() / MiB)) + 1),
    cpuOvercommit: Math.max(DEFAULT_ADMISSION.cpuOvercommit, Math.ceil(n / os.cpus().length) + 1),
  };
}
