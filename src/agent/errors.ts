/**
 * Every failure the agent reports is an AgentError: a ConnectError (so the router answers it as it is) with the
 * HTTP status the Connect protocol gives its code. Code names and statuses are @connectrpc/connect's own
 * (`codeToString`, `codeToHttpStatus`); the agent keeps no table of them.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import { codeToHttpStatus, codeToString } from '@connectrpc/connect/protocol-connect';

export class AgentError extends ConnectError {
  constructor(
    code: Code,
    message: string,
    /** Overrides the code's HTTP status, for the few protocol-level answers (405, 415) that the Connect protocol fixes. */
    readonly httpStatus: number = codeToHttpStatus(code),
    /** Extra response headers, e.g. Allow on a 405. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message, code);
  }

  // ConnectError answers `instanceof` by its name (which stays "ConnectError", so the router passes an AgentError on
  // as it is); an AgentError is recognised by its prototype, as any class is.
  static [Symbol.hasInstance](value: unknown): boolean {
    return Function.prototype[Symbol.hasInstance].call(AgentError, value);
  }
}

/** The Connect error body: `{"code":"not_found","message":"..."}`. */
export function errorBody(err: ConnectError): string {
  return JSON.stringify({ code: codeToString(err.code), message: err.rawMessage });
}

/** Maps a filesystem error (errno code) on `what` to the Connect error a client should see. */
export function fsError(err: unknown, what: string): AgentError {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return new AgentError(Code.NotFound, `${what}: no such file or directory`);
    case 'ENOTDIR':
      return new AgentError(Code.NotFound, `${what}: a component of the path is not a directory`);
    case 'EACCES':
    case 'EPERM':
      return new AgentError(Code.PermissionDenied, `${what}: permission denied for the agent's process user`);
    case 'ELOOP':
      return new AgentError(Code.InvalidArgument, `${what}: too many levels of symbolic links (a symlink loop)`);
    case 'ENAMETOOLONG':
      return new AgentError(Code.InvalidArgument, `${what}: file name too long`);
    default:
      return new AgentError(Code.Internal, `${what}: ${(err as Error | undefined)?.message ?? String(err)}`);
  }
}
