import { parseArgs, type ParseArgsConfig } from 'node:util';

/** Parses a command's flags; a bad flag is a clear error naming the command and its options. */
export function parseFlags<T extends NonNullable<ParseArgsConfig['options']>>(
  command: string,
  argv: string[],
  options: T,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (err) {
    const accepted = Object.keys(options)
      .map((o) => `--${o}`)
      .join(', ');
    throw new Error(`${command}: ${(err as Error).message} (options: ${accepted})`);
  }
}
