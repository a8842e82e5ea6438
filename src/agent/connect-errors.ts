/** AgentError (the fast path's error type) and ConnectError (the router's) are the same facts: convert one way. */
import { Code, ConnectError } from '@connectrpc/connect';
import { AgentError, type ConnectCode } from './errors';

const CODES: Record<ConnectCode, Code> = {
  canceled: Code.Canceled,
  unknown: Code.Unknown,
  invalid_argument: Code.InvalidArgument,
  deadline_exceeded: Code.DeadlineExceeded,
  not_found: Code.NotFound,
  already_exists: Code.AlreadyExists,
  permission_denied: Code.PermissionDenied,
  resource_exhausted: Code.ResourceExhausted,
  failed_precondition: Code.FailedPrecondition,
  aborted: Code.Aborted,
  out_of_range: Code.OutOfRange,
  unimplemented: Code.Unimplemented,
  internal: Code.Internal,
  unavailable: Code.Unavailable,
  data_loss: Code.DataLoss,
  unauthenticated: Code.Unauthenticated,
};

export function toConnectError(err: unknown): unknown {
  if (err instanceof AgentError) return new ConnectError(err.message, CODES[err.code]);
  return err;
}

/** Runs `fn`, turning an AgentError it throws into the ConnectError the router answers with. */
export function connectErrors<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw toConnectError(err);
  }
}
