/**
 * Looks up a user in a stack of layers without mounting it: /etc/passwd and /etc/group as the container will see
 * them (layer-view.ts: symlinks resolved inside the layers, never on the host). Pure parsing plus that lookup.
 */
import { readInLayers } from './layer-view';

export interface Account {
  uid: number;
  gid: number;
  home: string;
  additionalGids: number[];
}

function topmost(layers: string[], file: string): string {
  return readInLayers(layers, file) ?? '';
}

export function parseAccount(user: string, passwd: string, group: string): Account | undefined {
  const numeric = /^(\d+)(?::(\d+))?$/.exec(user);
  const entries = passwd.split('\n').map((l) => l.split(':'));
  const entry = numeric ? entries.find((e) => e[2] === numeric[1]) : entries.find((e) => e[0] === user);
  if (!entry && !numeric) return undefined;
  const uid = numeric ? Number(numeric[1]) : Number(entry![2]);
  const gid = numeric?.[2] !== undefined ? Number(numeric[2]) : entry ? Number(entry[3]) : uid;
  const name = entry?.[0];
  const additionalGids = name
    ? group
        .split('\n')
        .map((l) => l.split(':'))
        .filter((g) => g.length >= 4 && g[3]!.split(',').includes(name) && Number(g[2]) !== gid)
        .map((g) => Number(g[2]))
    : [];
  return { uid, gid, home: entry?.[5] || (uid === 0 ? '/root' : '/'), additionalGids };
}

export function lookupAccount(layers: string[], user: string): Account {
  const account = parseAccount(user, topmost(layers, 'etc/passwd'), topmost(layers, 'etc/group'));
  if (!account)
    throw new Error(
      `user ${JSON.stringify(user)} does not exist in the template's /etc/passwd (give a user name that exists, or uid[:gid])`,
    );
  return account;
}
