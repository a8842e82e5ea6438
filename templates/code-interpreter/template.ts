/**
 * The `code-interpreter-v1` template: the one `@e2b/code-interpreter` creates a sandbox from when no template is
 * named. Debian with the Jupyter kernel and the usual data libraries from Debian's archive, and the kit's
 * code-interpreter server (src/code-interpreter) started on port 49999 with the node the platform mounts into every
 * sandbox. Defined with the E2B Template builder: it builds on the kit's platform or any E2B-compatible one.
 */
import { type BuildInfo, type BuildOptions, Template, type TemplateClass, waitForPort } from 'e2b';
import { CODE_INTERPRETER_PORT, CODE_INTERPRETER_TEMPLATE } from '../../src/contract/code-interpreter';
import { SANDBOX_KIT_PAYLOAD } from '../../src/mcp/template/wrapper';
import { templateWithContextFor, trustExtraCa } from '../extra-ca';

/** The build settings (alias, memoryMB, cpuCount). */
export const CODE_INTERPRETER_SETTINGS = { alias: CODE_INTERPRETER_TEMPLATE, memoryMB: 1024, cpuCount: 1 } as const;

/**
 * The kernels and libraries. python3-munkres satisfies fonttools' "scipy or munkres": without it apt picks scipy,
 * which pulls pythran, g++ and boost (over a gigabyte) that nothing here uses.
 */
export const CODE_INTERPRETER_PACKAGES = [
  'ca-certificates',
  'python3-ipykernel',
  'python3-jupyter-client',
  'python3-pexpect',
  'python3-numpy',
  'python3-pandas',
  'python3-matplotlib',
  'python3-munkres',
] as const;

/** The server's command: its bundle (with kernel-bridge.py beside it) run by the payload's node. */
export const CODE_INTERPRETER_START = `${SANDBOX_KIT_PAYLOAD}/node ${SANDBOX_KIT_PAYLOAD}/bundle/code-interpreter.js`;

export interface CodeInterpreterTemplateOptions {
  /** Debian suite of the base image. */
  debian?: string;
  /** A PEM file of certificates the template trusts besides Debian's (templates/extra-ca.ts). */
  extraCaCertsFile?: string;
}

export function codeInterpreterTemplate(options: CodeInterpreterTemplateOptions = {}): TemplateClass {
  const installed = templateWithContextFor(options.extraCaCertsFile)
    .fromDebianImage(options.debian ?? 'bookworm')
    .aptInstall([...CODE_INTERPRETER_PACKAGES], { noInstallRecommends: true });
  return trustExtraCa(installed, options.extraCaCertsFile).setStartCmd(CODE_INTERPRETER_START, waitForPort(CODE_INTERPRETER_PORT));
}

/** Builds the template through an E2B-compatible API (the kit's platform when E2B_API_URL points at it). */
export function buildCodeInterpreterTemplate(
  connection: Pick<BuildOptions, 'apiKey' | 'apiUrl' | 'domain' | 'requestTimeoutMs' | 'onBuildLogs' | 'skipCache'> & {
    alias?: string;
  } = {},
  options: CodeInterpreterTemplateOptions = {},
): Promise<BuildInfo> {
  return Template.build(codeInterpreterTemplate(options), {
    ...CODE_INTERPRETER_SETTINGS,
    ...connection,
    alias: connection.alias ?? CODE_INTERPRETER_SETTINGS.alias,
  });
}
