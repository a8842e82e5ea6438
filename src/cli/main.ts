#!/usr/bin/env node
/** The `sandbox-kit` command: picks a subcommand and hands it the remaining arguments. */
import { UsageError } from './args';
import { COMMANDS } from './commands';

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const rows = COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `usage: sandbox-kit <command> [options]\n\ncommands:\n${rows.join('\n')}\n\nRun 'sandbox-kit <command> --help' for a command's options.`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    console.error(`sandbox-kit: unknown command ${JSON.stringify(name)}\n\n${usage()}`);
    return 2;
  }
  const mod = await command.load();
  return mod.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    // Bad command-line input is a usage error (2); anything else is the command failing (1).
    if (err instanceof UsageError) {
      console.error(`sandbox-kit ${err.message}`);
      process.exitCode = 2;
      return;
    }
    console.error(`sandbox-kit: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
