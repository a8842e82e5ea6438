/** The `mcp-gateway` executable inside the sandbox (bundled by esbuild; run with the kit's node). */
import { runMcpGateway } from './cli';

runMcpGateway(process.argv.slice(2), [process.execPath, ...process.execArgv, process.argv[1]]).then(
  (code) => {
    // The launcher exits at once; `serve` keeps running until a signal ends it.
    process.exit(code);
  },
  (err: unknown) => {
    process.stderr.write(`mcp-gateway: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
