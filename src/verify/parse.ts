/** Pure parsers of the command output `sandbox-kit verify` reads from a proxy host. */

/** `sysctl k1 k2 ...` lines (`key = value`) to a map. */
export function parseSysctl(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^\s*([\w.-]+)\s*=\s*(.*?)\s*$/.exec(line);
    if (m) values[m[1]] = m[2];
  }
  return values;
}

/** The device of the default route in `ip -4 route show default`, if any. */
export function parseDefaultRouteDevice(text: string): string | undefined {
  for (const line of text.split('\n')) {
    const m = /^default\b.*\bdev\s+(\S+)/.exec(line.trim());
    if (m) return m[1];
  }
  return undefined;
}

/** The qdisc kinds of `tc qdisc show dev X` (e.g. `mq`, `fq`, `fq_codel`). */
export function parseQdiscKinds(text: string): string[] {
  const kinds: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^qdisc\s+(\S+)/.exec(line.trim());
    if (m) kinds.push(m[1]);
  }
  return kinds;
}

export interface SocketProcess {
  name: string;
  pid: number;
}

export interface ListeningSocket {
  protocol: 'tcp' | 'udp';
  address: string;
  port: number;
  processes: SocketProcess[];
}

/** `ss -H -lntup` rows: protocol, local address and port, and the processes owning the socket. */
export function parseListeners(text: string): ListeningSocket[] {
  const sockets: ListeningSocket[] = [];
  for (const line of text.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 5 || (fields[0] !== 'tcp' && fields[0] !== 'udp')) continue;
    const local = /^(.*):(\d+|\*)$/.exec(fields[4]);
    if (!local || local[2] === '*') continue;
    const processes: SocketProcess[] = [];
    for (const m of line.matchAll(/\("([^"]+)",pid=(\d+)/g)) processes.push({ name: m[1], pid: Number(m[2]) });
    sockets.push({ protocol: fields[0], address: local[1], port: Number(local[2]), processes });
  }
  return sockets;
}

export interface Limit {
  soft: string;
  hard: string;
}

/** One row of /proc/<pid>/limits, e.g. `Max open files`. */
export function parseLimit(text: string, name: string): Limit | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const [soft, hard] = line.slice(name.length).trim().split(/\s+/);
    if (soft !== undefined && hard !== undefined) return { soft, hard };
  }
  return undefined;
}

export interface FileStat {
  /** Permission bits in octal, e.g. `600`. */
  mode: string;
  owner: string;
  group: string;
}

/** `stat -c '%a %U %G' FILE`. */
export function parseStat(text: string): FileStat | undefined {
  const m = /^([0-7]{3,4})\s+(\S+)\s+(\S+)\s*$/.exec(text.trim());
  return m ? { mode: m[1].replace(/^0(?=[0-7]{3}$)/, ''), owner: m[2], group: m[3] } : undefined;
}

/** The arguments of /proc/<pid>/cmdline (NUL-separated; shown one per line with `tr '\0' '\n'`). */
export function parseCmdline(text: string): string[] {
  return text.split(/[\0\n]/).filter((a) => a !== '');
}

/** ss-server's outbound bind address (`-b ADDR` or `-bADDR`), if any. */
export function bindAddress(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-b') return args[i + 1];
    if (args[i].startsWith('-b') && args[i].length > 2) return args[i].slice(2);
  }
  return undefined;
}

export interface InterfaceAddress {
  device: string;
  address: string;
}

/** `ip -o -4 addr show`: every IPv4 address with its device. */
export function parseAddresses(text: string): InterfaceAddress[] {
  const addresses: InterfaceAddress[] = [];
  for (const line of text.split('\n')) {
    const m = /^\d+:\s+(\S+)\s+inet\s+([\d.]+)\//.exec(line.trim());
    if (m) addresses.push({ device: m[1].replace(/@.*$/, ''), address: m[2] });
  }
  return addresses;
}
