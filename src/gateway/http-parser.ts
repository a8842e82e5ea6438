/**
 * Node's own HTTP/1 parser (llhttp), as its HTTP server and client use it: the one parser of the gateway, for the
 * clients' requests (client-connection.ts) and the sandboxes' answers (upstream-client.ts). Strict: no lenient flag,
 * so conflicting or repeated lengths, a Transfer-Encoding other than a final chunked, bad chunking, bare LF line ends,
 * folded header lines and junk are errors.
 */

/** One parser instance: fed with execute(), told what it found through the numbered callback slots. */
export interface NativeParser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  execute(data: Buffer): number | (Error & { code?: string; bytesParsed?: number });
  finish(): number | (Error & { code?: string }) | undefined;
  close(): void;
  [slot: number]: unknown;
}

interface ParserClass {
  new (): NativeParser;
  REQUEST: number;
  RESPONSE: number;
  kOnMessageBegin: number;
  kOnHeaders: number;
  kOnHeadersComplete: number;
  kOnBody: number;
  kOnMessageComplete: number;
  kLenientNone: number;
}

const common = require('node:_http_common') as { HTTPParser: ParserClass; methods: string[] };

export const HTTPParser: ParserClass = common.HTTPParser;

/** Method names by the number the parser reports. */
export const METHODS: readonly string[] = common.methods;

/**
 * What kOnHeadersComplete returns to tell the parser that no body follows and the connection now belongs to another
 * protocol (an upgrade, CONNECT): parsing stops after the head, and execute() returns where it stopped.
 */
export const SKIP_BODY_AND_UPGRADE = 2;
