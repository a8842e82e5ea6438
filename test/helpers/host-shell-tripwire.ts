/**
 * Keeps the host's shell profiles out of the tests that run an agent on the host. The agent is started in a mount
 * namespace of its own in which every file a login or interactive shell would read (/etc/profile, /etc/bash.bashrc,
 * /etc/profile.d, and the dotfiles of root's home, whose other contents are hidden behind an empty tmpfs) is a
 * tripwire: it writes its own name into a marker file and ends the shell with status 97. So a test that makes a
 * host agent run `bash -l` fails at once, the whole run learns of it (`tripped()`), and nothing of this machine's
 * profile (language managers, prompts, locks) runs. Commands that need a login shell are tested in a sandbox.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The status a login shell of the host ends with under the tripwire. */
export const TRIPWIRE_STATUS = 97;

const SYSTEM_PROFILES = ['/etc/profile', '/etc/bash.bashrc'];
const HOME_DOTFILES = ['.profile', '.bash_profile', '.bash_login', '.bashrc', '.bash_logout'];

/** The environment a host agent starts with: nothing of the test runner's (HOME is root's, behind the tripwire). */
export function hostAgentEnv(): NodeJS.ProcessEnv {
  return { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: rootHome(), LANG: 'C.UTF-8' };
}

export interface Tripwire {
  /** `argv` run inside the tripwired mount namespace. */
  argv: string[];
  /** The profile files a shell read so far (empty: none). */
  tripped(): string[];
  remove(): void;
}

export function underTripwire(argv: string[]): Tripwire {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'host-shell-tripwire-'));
  fs.chmodSync(dir, 0o755);
  const marker = path.join(dir, 'tripped');
  fs.writeFileSync(marker, '');
  fs.chmodSync(marker, 0o666); // the agent's commands may run as any user
  const wire = (file: string) => {
    const name = path.join(dir, `wire-${fs.readdirSync(dir).length}`);
    fs.writeFileSync(name, `echo ${JSON.stringify(file)} >>${JSON.stringify(marker)}\nexit ${TRIPWIRE_STATUS}\n`, { mode: 0o644 });
    return name;
  };
  const home = rootHome();
  const lines = ['set -e'];
  for (const file of SYSTEM_PROFILES.filter((f) => fs.existsSync(f))) lines.push(`mount --bind '${wire(file)}' '${file}'`);
  if (fs.existsSync('/etc/profile.d')) {
    lines.push(`mount -t tmpfs -o mode=0755 tripwire /etc/profile.d`, `cp '${wire('/etc/profile.d')}' /etc/profile.d/tripwire.sh`);
  }
  lines.push(`mount -t tmpfs -o mode=0755 tripwire '${home}'`);
  for (const f of HOME_DOTFILES) lines.push(`cp '${wire(path.join(home, f))}' '${path.join(home, f)}'`);
  lines.push('exec "$@"');
  const script = path.join(dir, 'enter.sh');
  fs.writeFileSync(script, `${lines.join('\n')}\n`);
  return {
    // A slave of the host's mounts, like the runtime's own namespaces: the copies of other tests' sandbox disks it
    // starts with go when their platform unmounts them, and the tripwires stay in here.
    argv: ['unshare', '--mount', '--propagation', 'slave', '/bin/sh', script, ...argv],
    tripped: () => fs.readFileSync(marker, 'utf8').split('\n').filter(Boolean),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** Root's home as /etc/passwd names it (what the agent gives root's commands as HOME). */
function rootHome(): string {
  const line = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.split(':')[2] === '0');
  return line?.split(':')[5] || '/root';
}
