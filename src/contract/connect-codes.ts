/**
 * The Connect protocol's error codes: each code's number, its name (the `code` of an error body) and the HTTP status
 * a unary answer with that code carries. The protocol fixes all three. They are written here, not taken from
 * @connectrpc/connect, so that the agent can answer an error without loading that library and the protobuf runtime
 * under it before it listens (agent/server.ts). test/unit/contract/connect-codes.test.ts holds this table equal to
 * the library's `Code`, `codeToString` and `codeToHttpStatus`.
 */
export const Code = {
  Canceled: 1,
  Unknown: 2,
  InvalidArgument: 3,
  DeadlineExceeded: 4,
  NotFound: 5,
  AlreadyExists: 6,
  PermissionDenied: 7,
  ResourceExhausted: 8,
  FailedPrecondition: 9,
  Aborted: 10,
  OutOfRange: 11,
  Unimplemented: 12,
  Internal: 13,
  Unavailable: 14,
  DataLoss: 15,
  Unauthenticated: 16,
} as const;

export type Code = (typeof Code)[keyof typeof Code];

/** Name and HTTP status by code number (index 0 is unused: Connect has no code 0). */
const TABLE: readonly (readonly [name: string, httpStatus: number])[] = [
  ['', 0],
  ['canceled', 499],
  ['unknown', 500],
  ['invalid_argument', 400],
  ['deadline_exceeded', 504],
  ['not_found', 404],
  ['already_exists', 409],
  ['permission_denied', 403],
  ['resource_exhausted', 429],
  ['failed_precondition', 400],
  ['aborted', 409],
  ['out_of_range', 400],
  ['unimplemented', 501],
  ['internal', 500],
  ['unavailable', 503],
  ['data_loss', 500],
  ['unauthenticated', 401],
];

/** The code's name in an error body: `not_found`. */
export function codeName(code: Code): string {
  return TABLE[code]![0];
}

/** The HTTP status of a unary answer with this code. */
export function codeHttpStatus(code: Code): number {
  return TABLE[code]![1];
}
