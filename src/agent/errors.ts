/**
 * Every failure the agent reports is an AgentError: an Error that @connectrpc/connect takes for one of its own
 * ConnectErrors (the library recognises one by its shape: name "ConnectError", a numeric code, rawMessage, metadata,
 * details and cause), so the router answers it as it is, with the HTTP status the Connect protocol gives its code.
 * It does not extend ConnectError: that class would load the library, and the protobuf runtime under it, before the
 * agent listens (server.ts loads the router on the first call that needs it). Codes, names and statuses are the
 * protocol's (contract/connect-codes.ts).
 */
import { Code, codeHttpStatus, codeName } from '../contract/connect-codes';

export class AgentError extends Error {
  override readonly name = 'ConnectError';
  readonly rawMessage: string;
  readonly details: unknown[] = [];
  override readonly cause = undefined;
  private headers_: Headers | undefined;

  constructor(
    readonly code: Code,
    message: string,
    /** Overrides the code's HTTP status, for the few protocol-level answers (405, 415) that the Connect protocol fixes. */
    readonly httpStatus: number = codeHttpStatus(code),
    /** Extra response headers, e.g. Allow on a 405. */
    readonly headers: Record<string, string> = {},
  ) {
    // The message a ConnectError has: `[not_found] gone`.
    super(message === '' ? `[${codeName(code)}]` : `[${codeName(code)}] ${message}`);
    this.rawMessage = message;
  }

  /**
   * The response metadata a ConnectError carries, made when the router reads it: the first `Headers` of a process
   * loads node's fetch implementation, 7 MiB of RSS (2.7 MiB of it the agent's own) that an agent answering only on
   * its fast path (a Stat of a missing file, a refused token) would otherwise carry from its first error on.
   */
  get metadata(): Headers {
    this.headers_ ??= new Headers();
    return this.headers_;
  }
}

/**
 * Any thrown value as an AgentError: itself; a ConnectError of the library (by the same shape the library checks),
 * with its code and message; anything else with `code` and its message.
 */
export function asAgentError(err: unknown, code: Code): AgentError {
  if (err instanceof AgentError) return err;
  const e = err as { name?: unknown; code?: unknown; rawMessage?: unknown } | null;
  if (err instanceof Error && e?.name === 'ConnectError' && typeof e.code === 'number' && typeof e.rawMessage === 'string')
    return new AgentError(e.code as Code, e.rawMessage);
  return new AgentError(code, err instanceof Error ? err.message : String(err));
}

/** The Connect error body: `{"code":"not_found","message":"..."}`. */
export function errorBody(err: AgentError): string {
  return JSON.stringify({ code: codeName(err.code), message: err.rawMessage });
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
