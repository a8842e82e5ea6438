import * as fs from 'node:fs';
import { renderResolvConf } from '../sandbox-etc';

/** What a sandbox's /etc/resolv.conf holds by default: the host's, minus loopback servers. */
export function hostSandboxResolvConf(): string {
  return renderResolvConf(fs.existsSync('/etc/resolv.conf') ? fs.readFileSync('/etc/resolv.conf', 'utf8') : '');
}
