/** Template definitions the tests build with the unmodified SDK, by name (the SDK client runs them in a child). */
import { Template, waitForPort } from 'e2b';

export const DEFINITIONS = {
  /** Debian, apt packages, a copied file with a mode, env, workdir, a start command waiting for a port. */
  sample: (context: string) =>
    Template({ fileContextPath: context })
      .fromDebianImage('bookworm')
      .aptInstall(['jq', 'socat'])
      .copy('hello.txt', '/app/', { mode: 0o640 })
      .setEnvs({ GREETING: 'hi there', APP_HOME: '/app' })
      .setWorkdir('/app')
      .setStartCmd('socat TCP-LISTEN:8080,fork,reuseaddr SYSTEM:"echo pong" &', waitForPort(8080)),
  missingPackage: (context: string) =>
    Template({ fileContextPath: context }).fromDebianImage('bookworm').aptInstall(['sandbox-kit-no-such-package']),
  failingRun: (context: string) =>
    Template({ fileContextPath: context })
      .fromDebianImage('bookworm')
      .runCmd('echo first line')
      .runCmd(['echo about to fail', 'echo on stderr >&2', 'exit 3']),
  neverReady: (context: string) => Template({ fileContextPath: context }).fromDebianImage('bookworm').setStartCmd('sleep 600', 'false'),
  slow: (context: string) => Template({ fileContextPath: context }).fromDebianImage('bookworm').runCmd(`sleep 4 # ${context}`),
};

export type DefinitionName = keyof typeof DEFINITIONS;
