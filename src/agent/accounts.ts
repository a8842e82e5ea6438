/**
 * The system's users and groups, read from /etc/passwd and /etc/group (the files the sandbox image owns; no NSS
 * modules are consulted). Each file is parsed once and parsed again only when its mtime, size or inode changes;
 * callers check freshness once per request, not per entry.
 */
import * as fs from 'node:fs';

export interface UserAccount {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

interface Table<T> {
  stamp: string;
  rows: T;
}

interface PasswdRows {
  byName: Map<string, UserAccount>;
  nameById: Map<number, string>;
}

export class Accounts {
  private passwd: Table<PasswdRows> | undefined;
  private group: Table<{ byId: Map<number, string>; members: Map<string, number[]> }> | undefined;

  constructor(
    private readonly passwdFile = '/etc/passwd',
    private readonly groupFile = '/etc/group',
  ) {}

  /** Re-reads a file that changed since the last look. Cheap: two stat calls. */
  refresh(): void {
    const ps = stamp(this.passwdFile);
    if (!this.passwd || this.passwd.stamp !== ps) this.passwd = { stamp: ps, rows: parsePasswd(readOrEmpty(this.passwdFile)) };
    const gs = stamp(this.groupFile);
    if (!this.group || this.group.stamp !== gs) {
      const text = readOrEmpty(this.groupFile);
      this.group = { stamp: gs, rows: { byId: parseGroup(text), members: parseGroupMembers(text) } };
    }
  }

  user(name: string): UserAccount | undefined {
    if (!this.passwd) this.refresh();
    return this.passwd!.rows.byName.get(name);
  }

  /** Owner name for a uid, or the uid as text when no user has it. */
  userName(uid: number): string {
    if (!this.passwd) this.refresh();
    return this.passwd!.rows.nameById.get(uid) ?? String(uid);
  }

  /** Group name for a gid, or the gid as text when no group has it. */
  groupName(gid: number): string {
    if (!this.group) this.refresh();
    return this.group!.rows.byId.get(gid) ?? String(gid);
  }

  /** The user's supplementary groups (from /etc/group member lists), without the primary group. */
  supplementaryGroups(user: UserAccount): number[] {
    if (!this.group) this.refresh();
    return (this.group!.rows.members.get(user.name) ?? []).filter((g) => g !== user.gid);
  }
}

function stamp(file: string): string {
  try {
    const st = fs.statSync(file, { bigint: true });
    return `${st.ino}:${st.size}:${st.mtimeNs}`;
  } catch {
    return 'missing';
  }
}

function readOrEmpty(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** `name:pw:uid:gid:gecos:home:shell` lines; the first line for a name or a uid wins, as getpwnam/getpwuid do. */
export function parsePasswd(text: string): PasswdRows {
  const byName = new Map<string, UserAccount>();
  const nameById = new Map<number, string>();
  for (const line of text.split('\n')) {
    const f = line.split(':');
    if (f.length < 7 || f[0] === '' || line.startsWith('#') || line.startsWith('+') || line.startsWith('-')) continue;
    const uid = Number(f[2]);
    const gid = Number(f[3]);
    if (!Number.isInteger(uid) || !Number.isInteger(gid) || f[2] === '' || f[3] === '') continue;
    const account: UserAccount = { name: f[0]!, uid, gid, home: f[5] || '/' };
    if (!byName.has(account.name)) byName.set(account.name, account);
    if (!nameById.has(uid)) nameById.set(uid, account.name);
  }
  return { byName, nameById };
}

/** `name:pw:gid:members` lines. */
export function parseGroup(text: string): Map<number, string> {
  const byId = new Map<number, string>();
  for (const line of text.split('\n')) {
    const f = line.split(':');
    if (f.length < 3 || f[0] === '' || line.startsWith('#') || line.startsWith('+') || line.startsWith('-')) continue;
    const gid = Number(f[2]);
    if (f[2] === '' || !Number.isInteger(gid)) continue;
    if (!byId.has(gid)) byId.set(gid, f[0]!);
  }
  return byId;
}

/** `name:pw:gid:a,b,c` lines -> member name -> gids of the groups listing it. */
export function parseGroupMembers(text: string): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const line of text.split('\n')) {
    const f = line.split(':');
    if (f.length < 4 || f[0] === '' || line.startsWith('#') || line.startsWith('+') || line.startsWith('-')) continue;
    const gid = Number(f[2]);
    if (f[2] === '' || !Number.isInteger(gid)) continue;
    for (const member of f[3]!.split(',')) {
      if (member === '') continue;
      const list = out.get(member) ?? [];
      if (!list.includes(gid)) list.push(gid);
      out.set(member, list);
    }
  }
  return out;
}
