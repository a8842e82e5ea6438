/**
 * The agent as a program of its own: `node main.js [flags]`, the same flags as `sandbox-kit agent`. The runtime
 * bundles this file (with everything it imports) into one file and runs it in every sandbox, so nothing here may
 * read files that sit next to it at run time.
 */
import { runAgentCli } from './cli';

runAgentCli(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`agent: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
