/**
 * Connect error codes and their HTTP statuses (connectrpc.com/docs/protocol, "Error Codes"). Every failure the
 * agent reports is an AgentError carrying one of these codes; the server turns it into the Connect error body.
 */
export const CONNECT_HTTP_STATUS = {
  canceled: 499,
  unknown: 500,
  invalid_argument: 400,
  deadline_exceeded: 504,
  not_found: 404,
  already_exists: 409,
  permission_denied: 403,
  resource_exhausted: 429,
  failed_precondition: 400,
  aborted: 409,
  out_of_range: 400,
  unimplemented: 501,
  internal: 500,
  unavailable: 503,
  data_loss: 500,
  unauthenticated: 401,
} as const;

export type ConnectCode = keyof typeof CONNECT_HTTP_STATUS;

export class AgentError extends Error {
  constructor(
    readonly code: ConnectCode,
    message: string,
    /** Overrides the code's HTTP status, for the few protocol-level answers (405, 415) that the Connect protocol fixes. */
    readonly httpStatus: number = CONNECT_HTTP_STATUS[code],
    /** Extra response headers, e.g. Allow on a 405. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AgentError';
  }
}

/** The Connect error body: `{"code":"not_found","message":"..."}`. */
export function errorBody(err: AgentError): string {
  return JSON.stringify({ code: err.code, message: err.message });
}

/** Maps a filesystem error (errno code) on `what` to the Connect error a client should see. */
export function fsError(err: unknown, what: string): AgentError {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return new AgentError('not_found', `${what}: no such file or directory`);
    case 'ENOTDIR':
      return new AgentError('not_found', `${what}: a component of the path is not a directory`);
    case 'EACCES':
    case 'EPERM':
      return new AgentError('permission_denied', `${what}: permission denied for the agent's process user`);
    case 'ELOOP':
      return new AgentError('invalid_argument', `${what}: too many levels of symbolic links (a symlink loop)`);
    case 'ENAMETOOLONG':
      return new AgentError('invalid_argument', `${what}: file name too long`);
    default:
      return new AgentError('internal', `${what}: ${(err as Error | undefined)?.message ?? String(err)}`);
  }
}
