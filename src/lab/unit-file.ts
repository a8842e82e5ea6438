/**
 * A parser for the parts of a systemd service unit the lab's supervisor acts on. It reads the rendered
 * ss-server.service itself, so what the lab runs is what systemd would run on the proxy host.
 */
export type RestartPolicy = 'no' | 'always' | 'on-success' | 'on-failure' | 'on-abnormal' | 'on-abort' | 'on-watchdog';

const RESTART_POLICIES: readonly RestartPolicy[] = ['no', 'always', 'on-success', 'on-failure', 'on-abnormal', 'on-abort', 'on-watchdog'];

export interface UnitCommand {
  argv: string[];
  /** A leading `-`: a failure of this command is ignored. */
  ignoreFailure: boolean;
}

/** An EnvironmentFile= entry; a leading `-` makes a missing file fine. */
export interface EnvironmentFile {
  path: string;
  optional: boolean;
}

export interface ServiceUnit {
  execStartPre: UnitCommand[];
  execStart: UnitCommand;
  /** Run once the main process has started (Type=simple); a failure stops the service like a failed start. */
  execStartPost: UnitCommand[];
  /** Environment= assignments, in order (a later one wins). */
  environment: Record<string, string>;
  /** Read at every start, after Environment= (their values win), as systemd does. */
  environmentFiles: EnvironmentFile[];
  restart: RestartPolicy;
  /** Seconds between an exit and the restart (systemd's default: 100 ms). */
  restartSec: number;
  /** Soft and hard open-file limit; undefined when the unit does not set one. */
  limitNoFile?: { soft: number; hard: number };
}

/** Splits a command line the way systemd does for the cases units use: whitespace, single and double quotes. */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let current = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && i + 1 < line.length) current += line[++i];
      else current += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < line.length) {
      current += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(current);
      current = '';
      inWord = false;
    } else {
      current += c;
      inWord = true;
    }
  }
  if (quote) throw new Error(`unterminated ${quote} quote in command line: ${line}`);
  if (inWord) words.push(current);
  return words;
}

function parseCommand(key: string, value: string): UnitCommand {
  let rest = value.trim();
  let ignoreFailure = false;
  // Prefixes systemd allows before the path; only `-` changes what the supervisor does.
  while (/^[-@:+!]/.test(rest)) {
    if (rest[0] === '-') ignoreFailure = true;
    if (rest[0] === '@') throw new Error(`${key}: the '@' prefix (custom argv[0]) is not supported`);
    rest = rest.slice(rest[0] === '!' && rest[1] === '!' ? 2 : 1);
  }
  const argv = splitCommandLine(rest);
  if (argv.length === 0) throw new Error(`${key}: empty command`);
  if (!argv[0]!.startsWith('/')) throw new Error(`${key}: the executable must be an absolute path, got ${JSON.stringify(argv[0])}`);
  return { argv, ignoreFailure };
}

/** `${NAME}` in a command's words, as systemd expands it: the variable's value from the unit's environment ('' unset). */
export function expandCommand(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): string[] {
  return argv.map((word) => word.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => env[name] ?? ''));
}

/** systemd time spans as used for RestartSec: a plain number of seconds, or units such as 500ms, 2s, 1min. */
export function parseTimeSpan(value: string): number {
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  const units: Record<string, number> = { ms: 0.001, s: 1, sec: 1, m: 60, min: 60, h: 3600 };
  let total = 0;
  const re = /(\d+(?:\.\d+)?)\s*(ms|sec|s|min|m|h)/gy;
  let matched = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    total += Number(m[1]) * units[m[2]!]!;
    matched = re.lastIndex;
    while (text[matched] === ' ') matched++;
    re.lastIndex = matched;
  }
  if (matched !== text.length || text.length === 0)
    throw new Error(`invalid time span ${JSON.stringify(value)}: expected e.g. 2, 2s, 500ms`);
  return total;
}

function parseLimit(value: string): { soft: number; hard: number } {
  const parts = value.trim().split(':');
  const num = (p: string): number => {
    if (!/^\d+$/.test(p)) throw new Error(`LimitNOFILE: expected a number or SOFT:HARD, got ${JSON.stringify(value)}`);
    return Number(p);
  };
  if (parts.length === 1) return { soft: num(parts[0]!), hard: num(parts[0]!) };
  if (parts.length === 2) return { soft: num(parts[0]!), hard: num(parts[1]!) };
  throw new Error(`LimitNOFILE: expected a number or SOFT:HARD, got ${JSON.stringify(value)}`);
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `Environment=` value: space-separated NAME=VALUE words, quoted as in command lines. */
function parseEnvironment(value: string, into: Record<string, string>): void {
  for (const word of splitCommandLine(value)) {
    const eq = word.indexOf('=');
    const name = eq < 0 ? '' : word.slice(0, eq);
    if (!ENV_NAME.test(name)) throw new Error(`expected NAME=VALUE assignments, got ${JSON.stringify(word)}`);
    into[name] = word.slice(eq + 1);
  }
}

function parseEnvironmentFileEntry(value: string): EnvironmentFile {
  const optional = value.startsWith('-');
  const path = optional ? value.slice(1) : value;
  if (!path.startsWith('/')) throw new Error(`expected an absolute path (optionally after '-'), got ${JSON.stringify(value)}`);
  return { path, optional };
}

/**
 * The text of an environment file: NAME=VALUE lines, `#` and `;` comments, blank lines; a value wholly in single or
 * double quotes loses them. Errors name the file and the line.
 */
export function parseEnvironmentFile(text: string, source: string): Record<string, string> {
  const out: Record<string, string> = {};
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) return;
    const eq = line.indexOf('=');
    const name = eq < 0 ? '' : line.slice(0, eq).trim();
    if (!ENV_NAME.test(name)) throw new Error(`${source} line ${index + 1}: expected NAME=VALUE, got ${JSON.stringify(line)}`);
    let value = line.slice(eq + 1).trim();
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.at(-1) === value[0]) value = value.slice(1, -1);
    out[name] = value;
  });
  return out;
}

/** Parses the [Service] section of a unit file. Unknown keys are ignored; a missing ExecStart is an error. */
export function parseServiceUnit(text: string, source = 'unit file'): ServiceUnit {
  let section = '';
  const execStartPre: UnitCommand[] = [];
  const execStartPost: UnitCommand[] = [];
  const environment: Record<string, string> = {};
  const environmentFiles: EnvironmentFile[] = [];
  let execStart: UnitCommand | undefined;
  let restart: RestartPolicy = 'no';
  let restartSec = 0.1;
  let limitNoFile: ServiceUnit['limitNoFile'];

  // systemd joins lines ending in a backslash before parsing.
  const lines = text.replace(/\\\n/g, ' ').split('\n');
  lines.forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) return;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = header[1]!;
      return;
    }
    if (section !== 'Service') return;
    const eq = line.indexOf('=');
    if (eq < 0) throw new Error(`${source} line ${index + 1}: expected KEY=VALUE, got ${JSON.stringify(line)}`);
    const key = line.slice(0, eq).trim();
    const value = line.slice(eq + 1).trim();
    const where = `${source} line ${index + 1}: ${key}`;
    try {
      switch (key) {
        case 'ExecStartPre':
          // An empty assignment resets the list, as in systemd.
          if (value === '') execStartPre.length = 0;
          else execStartPre.push(parseCommand(key, value));
          break;
        case 'ExecStartPost':
          if (value === '') execStartPost.length = 0;
          else execStartPost.push(parseCommand(key, value));
          break;
        case 'Environment':
          parseEnvironment(value, environment);
          break;
        case 'EnvironmentFile':
          if (value === '') environmentFiles.length = 0;
          else environmentFiles.push(parseEnvironmentFileEntry(value));
          break;
        case 'ExecStart':
          if (execStart) throw new Error('ExecStart given twice (only Type=oneshot may have several)');
          execStart = parseCommand(key, value);
          break;
        case 'Restart':
          if (!(RESTART_POLICIES as readonly string[]).includes(value))
            throw new Error(`expected one of ${RESTART_POLICIES.join(', ')}, got ${JSON.stringify(value)}`);
          restart = value as RestartPolicy;
          break;
        case 'RestartSec':
          restartSec = parseTimeSpan(value);
          break;
        case 'LimitNOFILE':
          limitNoFile = parseLimit(value);
          break;
        default:
          break;
      }
    } catch (err) {
      throw new Error(`${where}: ${(err as Error).message.replace(/^\w+: /, '')}`);
    }
  });
  if (!execStart) throw new Error(`${source}: no ExecStart= in the [Service] section`);
  return {
    execStartPre,
    execStart,
    execStartPost,
    environment,
    environmentFiles,
    restart,
    restartSec,
    ...(limitNoFile ? { limitNoFile } : {}),
  };
}

/** Whether systemd would restart a service that exited with `code` (or was killed by `signal`) under `policy`. */
export function shouldRestart(policy: RestartPolicy, code: number | null, signal: NodeJS.Signals | null): boolean {
  const clean = code === 0 || (signal !== null && ['SIGHUP', 'SIGINT', 'SIGTERM', 'SIGPIPE'].includes(signal));
  const abnormal = signal !== null && !clean;
  switch (policy) {
    case 'no':
      return false;
    case 'always':
      return true;
    case 'on-success':
      return clean;
    case 'on-failure':
      return !clean;
    case 'on-abnormal':
      return abnormal;
    case 'on-abort':
      // systemd: an uncaught signal that is not a clean exit signal (SIGKILL included).
      return abnormal;
    case 'on-watchdog':
      return false;
  }
}
