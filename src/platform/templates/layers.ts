/**
 * What the builder asks of the merged view of a template's layers (its /etc/passwd, whether a path exists), read
 * from the host without mounting: src/runtime/layer-view.ts resolves every path, symlinks included, inside the
 * layers, never on the host.
 */
import { existsInLayers, readInLayers } from '../../runtime/layer-view';

export async function pathExists(layers: string[], path: string): Promise<boolean> {
  return existsInLayers(layers, path);
}

function passwdLine(layers: string[], user: string): string[] | undefined {
  const text = readInLayers(layers, 'etc/passwd');
  return text
    ?.split('\n')
    .map((line) => line.split(':'))
    .find((fields) => fields[0] === user);
}

/** Whether /etc/passwd of the merged root names `user`. */
export async function userExists(layers: string[], user: string): Promise<boolean> {
  return passwdLine(layers, user) !== undefined;
}

/** The home directory of `user` in the merged root, from /etc/passwd. */
export async function homeOf(layers: string[], user: string): Promise<string | undefined> {
  return passwdLine(layers, user)?.[5];
}

/** An image config's `User` (`name`, `uid`, `name:group`, `uid:gid`) as a user name of the merged root, when it has one. */
export async function userNameOf(layers: string[], user: string): Promise<string | undefined> {
  const who = user.split(':')[0] ?? '';
  if (!/^\d+$/.test(who)) return who === '' ? undefined : who;
  return readInLayers(layers, 'etc/passwd')
    ?.split('\n')
    .map((line) => line.split(':'))
    .find((fields) => fields[2] === who)?.[0];
}
