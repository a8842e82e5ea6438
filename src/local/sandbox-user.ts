/**
 * The sandbox user (`agent.defaultUser`) in the local system's sandboxes. Those sandboxes share this machine's users
 * through their /etc view, so when the user does not exist here it is added to the sandbox's own /etc/passwd and
 * /etc/group (in its /etc layer, never the real /etc), with a home directory of its own.
 */
import type { LayerFile } from '../lab/etc-layer';

export interface SandboxUser {
  name: string;
  uid: number;
  gid: number;
  home: string;
  /** Files for the sandbox's /etc layer; empty when the machine already has the user. */
  files: LayerFile[];
}

function rows(text: string): string[][] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('#'))
    .map((l) => l.split(':'));
}

/** Pure: the user as the sandbox will see it, given this machine's passwd and group files. */
export function sandboxUser(name: string, passwd: string, group: string, homeIfNew: string): SandboxUser {
  const users = rows(passwd);
  const existing = users.find((r) => r[0] === name);
  if (existing) return { name, uid: Number(existing[2]), gid: Number(existing[3]), home: existing[5] ?? '/', files: [] };
  const groups = rows(group);
  const taken = new Set([...users.map((r) => Number(r[2])), ...groups.map((r) => Number(r[2]))]);
  let id = 1000;
  while (taken.has(id)) id++;
  const withNewline = (text: string) => (text === '' || text.endsWith('\n') ? text : `${text}\n`);
  return {
    name,
    uid: id,
    gid: id,
    home: homeIfNew,
    files: [
      { path: '/etc/passwd', content: `${withNewline(passwd)}${name}:x:${id}:${id}:sandbox user:${homeIfNew}:/bin/sh\n`, mode: 0o644 },
      { path: '/etc/group', content: `${withNewline(group)}${name}:x:${id}:\n`, mode: 0o644 },
    ],
  };
}
