/**
 * The Connect protocol's rules the agent enforces (connectrpc.com/docs/protocol): POST only, JSON only,
 * `Connect-Protocol-Version: 1` required, `Connect-Timeout-Ms` as the call's deadline, request compression
 * identity/gzip/br, and a body size limit that counts decompressed bytes too. Request bodies are held in memory only
 * within a budget shared by every call being received (RECEIVING_BUDGET_BYTES), so many clients sending at once cannot
 * make the agent hold more than that, however many connections they open.
 */
import type { IncomingMessage } from 'node:http';
import { isUtf8 } from 'node:buffer';
import { AgentError } from './errors';
import { Code } from '../contract/connect-codes';

export const ACCEPTED_ENCODINGS = 'gzip, br';

/** node:zlib, loaded on the first compressed body: few clients compress, and the agent starts without it. */
const zlib = () => require('node:zlib') as typeof import('node:zlib');

/** The largest request message of a call the Connect router or the process stream path reads (a Start, a SendInput). */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/** Bytes of request bodies the agent holds while they arrive, all calls together (docs/agent.md, "Memory"). */
export const RECEIVING_BUDGET_BYTES = 16 * 1024 * 1024;
let receiving = 0;

export function checkProtocolHeaders(req: IncomingMessage): void {
  const version = req.headers['connect-protocol-version'];
  if (version === undefined) {
    throw new AgentError(Code.InvalidArgument, 'missing Connect-Protocol-Version header: it must be 1');
  }
  if (version !== '1') {
    throw new AgentError(Code.InvalidArgument, `Connect-Protocol-Version ${JSON.stringify(version)} is not supported: it must be 1`);
  }
  checkJsonForm(req, 'unary');
}

/**
 * The agent speaks the Connect protocol with JSON only (docs/agent.md, "Binary protobuf"): a unary call's body is
 * `application/json`, a streaming call's `application/connect+json`. Anything else, binary protobuf and gRPC
 * included, is refused at once with 415, before its body is read.
 */
export function checkJsonForm(req: IncomingMessage, kind: 'unary' | 'stream'): void {
  const type = (req.headers['content-type'] ?? '').toLowerCase().replace(/\s+/g, '');
  const json = kind === 'unary' ? 'application/json' : 'application/connect+json';
  if (type !== json && type !== `${json};charset=utf-8`) {
    throw new AgentError(
      Code.Unimplemented,
      `Content-Type ${JSON.stringify(req.headers['content-type'] ?? '')} is not supported: this agent speaks Connect with JSON bodies (${json} for this procedure)`,
      415,
      { 'accept-post': json },
    );
  }
}

/** Reads the whole request body, decompressed, failing with resource_exhausted past `maxBytes`. */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase().trim();
  if (encoding !== 'identity' && encoding !== 'gzip' && encoding !== 'br') {
    throw new AgentError(
      Code.Unimplemented,
      `Content-Encoding ${JSON.stringify(encoding)} is not supported (accepted: identity, ${ACCEPTED_ENCODINGS})`,
      501,
      {
        'accept-encoding': ACCEPTED_ENCODINGS,
      },
    );
  }
  if (encoding === 'identity' && declared !== undefined && Number(declared) > maxBytes) {
    throw tooLarge(maxBytes);
  }
  const raw = await collect(req, maxBytes, encoding === 'identity' ? maxBytes : maxBytes * 16);
  if (encoding === 'identity') return raw;
  try {
    const inflate = encoding === 'gzip' ? zlib().gunzipSync : zlib().brotliDecompressSync;
    return inflate(raw, { maxOutputLength: maxBytes });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) throw tooLarge(maxBytes);
    throw new AgentError(Code.InvalidArgument, `request body is not valid ${encoding}: ${(err as Error).message}`);
  }
}

function tooLarge(maxBytes: number): AgentError {
  return new AgentError(Code.ResourceExhausted, `request body is larger than ${maxBytes} bytes (the agent's --max-body-bytes)`);
}

function collect(req: IncomingMessage, maxBytes: number, wireLimit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    let held = 0;
    const fail = (err: AgentError) => {
      cleanup();
      req.resume();
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > wireLimit) return fail(tooLarge(maxBytes));
      if (receiving + chunk.length > RECEIVING_BUDGET_BYTES) {
        return fail(
          new AgentError(
            Code.ResourceExhausted,
            `the agent is receiving ${receiving} bytes of other request bodies, and this one would pass the ${RECEIVING_BUDGET_BYTES} it holds at once; retry later`,
          ),
        );
      }
      receiving += chunk.length;
      held += chunk.length;
      parts.push(chunk);
    };
    const onEnd = () => {
      const body = Buffer.concat(parts, size);
      cleanup();
      resolve(body);
    };
    const onError = (err: Error) => {
      cleanup();
      reject(new AgentError(Code.Canceled, `request body was not received: ${err.message}`));
    };
    const onAborted = () => {
      cleanup();
      reject(new AgentError(Code.Canceled, 'the client closed the connection before sending the whole body'));
    };
    const cleanup = () => {
      receiving -= held;
      held = 0;
      parts.length = 0;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      req.off('close', onAborted);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
    req.on('close', onAborted);
  });
}

/**
 * Parses a JSON request body; malformed text or bytes are invalid_argument. An empty body is the empty message.
 * With `integersOnly` (messages whose only numbers are integer fields), a number literal whose exact value is not
 * an integer is refused here, because JSON.parse rounds it first: `1e-400` would arrive as 0.
 */
export function parseJsonBody(body: Buffer, integersOnly = false): unknown {
  if (body.length === 0) return {};
  if (!isUtf8(body)) throw new AgentError(Code.InvalidArgument, 'request body is not valid UTF-8 JSON');
  const text = body.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new AgentError(Code.InvalidArgument, `request body is not valid JSON: ${(err as Error).message}`);
  }
  if (integersOnly) {
    const bad = nonIntegralNumber(text);
    if (bad !== undefined)
      throw new AgentError(Code.InvalidArgument, `number ${bad} is not an integer; the request's numeric fields take integers only`);
  }
  return value;
}

/** The first number literal in JSON text whose exact decimal value is not an integer, or undefined. */
export function nonIntegralNumber(text: string): string | undefined {
  const tokens = /"(?:[^"\\]|\\.)*"|-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?/g;
  for (let m = tokens.exec(text); m !== null; m = tokens.exec(text)) {
    if (m[0].startsWith('"') || (m[2] === undefined && m[3] === undefined)) continue;
    const digits = (m[1]! + (m[2] ?? '')).replace(/^0+(?=\d)/, '');
    const exponent = Number(m[3] ?? 0) - (m[2]?.length ?? 0);
    // value = digits * 10^exponent: an integer when the digits cut off by a negative exponent are all zero.
    if (exponent < 0 && /[1-9]/.test(digits.slice(Math.max(0, digits.length + exponent)))) return m[0];
  }
  return undefined;
}
