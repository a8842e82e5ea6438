/**
 * The code-interpreter server inside a `code-interpreter-v1` sandbox (bundled by esbuild beside kernel-bridge.py,
 * run with the payload's node): `code-interpreter [--port 49999] [--host 0.0.0.0] [--cwd /home/user]`.
 * `code-interpreter js-kernel DIR` is the javascript kernel it starts for a context.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CODE_INTERPRETER_PORT } from '../contract/code-interpreter';
import { Contexts } from './contexts';
import { runJsKernel } from './js-kernel';
import { KernelProcess } from './kernel';
import { codeInterpreterServer } from './server';
import type { Language } from './wire';

/** The bridge's file name beside the bundle (scripts/bundle.ts copies it there). */
export const KERNEL_BRIDGE = 'kernel-bridge.py';

function flag(argv: string[], name: string, fallback: string): string {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1] : fallback;
}

function serve(argv: string[]): void {
  const port = Number(flag(argv, 'port', String(CODE_INTERPRETER_PORT)));
  const host = flag(argv, 'host', '0.0.0.0');
  const wanted = flag(argv, 'cwd', '/home/user');
  const cwd = existsSync(wanted) ? wanted : process.cwd();
  const bridge = join(__dirname, KERNEL_BRIDGE);
  const self = [process.execPath, ...process.execArgv, process.argv[1]];
  const start = (language: Language, dir: string) =>
    new KernelProcess(language === 'javascript' ? [...self, 'js-kernel', dir] : ['python3', bridge, language, dir], dir);
  const contexts = new Contexts(start, cwd);
  const server = codeInterpreterServer(contexts);
  server.listen(port, host, () => {
    process.stderr.write(`code-interpreter: listening on ${host}:${port}\n`);
    // The default context is what `runCode` uses first: it starts now, not on the first call.
    contexts.defaultContext('python').catch((err: Error) => process.stderr.write(`code-interpreter: python: ${err.message}\n`));
  });
  const stop = () => {
    server.close();
    contexts.closeAll().finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

const argv = process.argv.slice(2);
if (argv[0] === 'js-kernel') runJsKernel(argv[1] ?? process.cwd());
else serve(argv);
