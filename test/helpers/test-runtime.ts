/**
 * Which OCI runtime the runtime and platform tests run with: the files' own choice by default; SANDBOX_KIT_TEST_RUNTIME
 * (crun, runc, runsc or auto) runs the same files under another one, e.g. `SANDBOX_KIT_TEST_RUNTIME=runsc npx jest
 * test/integration/platform/sdk-real.test.ts`.
 */
import { RUNTIME_CHOICES, type RuntimeChoice, type RuntimeName } from '../../src/contract/runtime-choice';

function fromEnv(): RuntimeChoice | undefined {
  const value = process.env.SANDBOX_KIT_TEST_RUNTIME;
  if (value === undefined || value === '') return undefined;
  if (!(RUNTIME_CHOICES as readonly string[]).includes(value))
    throw new Error(`SANDBOX_KIT_TEST_RUNTIME=${value}: expected one of ${RUNTIME_CHOICES.join(', ')}`);
  return value as RuntimeChoice;
}

/** The runtime a platform test starts the platform with (default auto). */
export function testRuntime(): RuntimeChoice {
  return fromEnv() ?? 'auto';
}

/** The runtimes a file that compares runtimes runs through: the one asked for, or the file's own list. */
export function testRuntimes<T extends RuntimeName>(defaults: readonly T[]): RuntimeName[] {
  const asked = fromEnv();
  return asked === undefined || asked === 'auto' ? [...defaults] : [asked];
}
