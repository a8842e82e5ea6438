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
  /** A 5 MB line without an end, then 100000 short lines. */
  logFlood: (context: string) =>
    Template({ fileContextPath: context })
      .fromDebianImage('bookworm')
      .runCmd(`head -c 5000000 /dev/zero | tr '\\0' x; echo; seq 1 100000; echo flood-done # ${context}`),
  /** A step writing 300 MB (past the security test's 128 MB step disk), one writing 50 MB. */
  diskFill: (context: string) =>
    Template({ fileContextPath: context }).fromDebianImage('bookworm').runCmd(`dd if=/dev/zero of=/tmp/fill bs=1M count=300 # ${context}`),
  diskUnder: (context: string) =>
    Template({ fileContextPath: context })
      .fromDebianImage('bookworm')
      .runCmd(`dd if=/dev/zero of=/tmp/under bs=1M count=50 status=none # ${context}`),
  sleepy: (context: string) => Template({ fileContextPath: context }).fromDebianImage('bookworm').runCmd(`sleep 600 # ${context}`),
  /** A copied tree with a symlink to / and one inside it, then a file copied through the symlink to /. */
  linkTree: (context: string) =>
    Template({ fileContextPath: context })
      .fromDebianImage('bookworm')
      .copy('tree', '/opt/tree')
      .copy('payload.txt', '/opt/tree/up/etc/sk-canary-through-link')
      .runCmd('cat /opt/tree/link.txt /etc/sk-canary-through-link'),
  /** /etc/passwd made a symlink to a path that exists on the host (not in the template), then a step as a user. */
  passwdToHost: (context: string) =>
    Template({ fileContextPath: context })
      .fromDebianImage('bookworm')
      .runCmd(`rm /etc/passwd && ln -s ${context}/host-passwd /etc/passwd`, { user: 'root' })
      .runCmd('echo HOME=$HOME uid=$(id -u)'),
  copyHello: (context: string) => Template({ fileContextPath: context }).fromDebianImage('bookworm').copy('hello.txt', '/app/hello.txt'),
};

export type DefinitionName = keyof typeof DEFINITIONS;
