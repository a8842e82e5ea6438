/** What the `@e2b/code-interpreter` SDK assumes about the sandbox it runs code in. */

/** The template `Sandbox.create()` of `@e2b/code-interpreter` uses when none is named. */
export const CODE_INTERPRETER_TEMPLATE = 'code-interpreter-v1';
/** The port of the code-interpreter server inside the sandbox (the SDK calls it JUPYTER_PORT). */
export const CODE_INTERPRETER_PORT = 49999;
