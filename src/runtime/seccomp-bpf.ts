/**
 * crun 1.8.1 compiles the spec's seccomp profile (seccomp.ts) with libseccomp at every create; it keeps no compiled
 * copy between containers. The kit keeps the program crun compiled for its first hardened sandbox (crun writes it to
 * `<its --root>/<id>/seccomp.bpf`) and hands it to later creates as the `run.oci.seccomp_bpf_data` annotation
 * (base64), which crun loads as it is instead of compiling the profile. Keyed by the profile's text, so another
 * profile is compiled again. crun only: runc and runsc ignore the annotation and compile the profile themselves.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SeccompProfile } from './seccomp';

export const SECCOMP_BPF_ANNOTATION = 'run.oci.seccomp_bpf_data';

/** A classic BPF instruction's size: a program is a whole number of them. */
const BPF_INSTRUCTION_BYTES = 8;

export class CompiledSeccomp {
  private readonly programs = new Map<string, string>();

  /** The compiled program of `profile`, base64, once one was kept. */
  of(profile: SeccompProfile): string | undefined {
    return this.programs.get(JSON.stringify(profile));
  }

  /** Keeps the program crun compiled from `profile` for container `id` under `stateDir`; a missing or odd file is skipped. */
  keep(profile: SeccompProfile, stateDir: string, id: string): void {
    const key = JSON.stringify(profile);
    if (this.programs.has(key)) return;
    let program: Buffer;
    try {
      program = fs.readFileSync(path.join(stateDir, id, 'seccomp.bpf'));
    } catch {
      return;
    }
    if (program.length > 0 && program.length % BPF_INSTRUCTION_BYTES === 0) this.programs.set(key, program.toString('base64'));
  }
}
