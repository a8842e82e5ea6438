/**
 * Process.Start and Process.Connect in the Connect protocol's JSON streaming form (what the E2B SDK sends), written
 * by the agent itself; every other form of these two (binary protobuf, gRPC) still goes through the router.
 *
 * Why: the router serialises `bytes` with protobuf-es's base64, which on Node 20 (no Uint8Array.toBase64) is a
 * JavaScript loop; measured here, a process printing 64 MiB reached the client at ~16 MB/s that way, the CPU
 * spent in that loop. Data events are written with Buffer's native base64 instead; every other event, the request
 * decoding (generated schema), the handlers and the error codes are the same code the router uses.
 *
 * Frames: each event is an envelope (flags 0, big-endian length, JSON); the last is the end-stream envelope
 * (flags 2) with `{}` or `{"error":{code,message}}`. Writes wait for the socket (the events' own back-pressure).
 */
import type * as http from 'node:http';
import { fromJson, toJson } from '@bufbuild/protobuf';
import { createContextValues, createHandlerContext, type HandlerContext } from '@connectrpc/connect';
import { Code, codeName } from '../../contract/connect-codes';
import { allocEnvelope, ENVELOPE_HEAD_BYTES, encodeEnvelope, END_STREAM_FLAG, splitEnvelopes } from '../../contract/connect-envelope';
import { type AgentServices, deadlineKey } from '../call-context';
import { MAX_MESSAGE_BYTES, readBody } from '../connect-protocol';
import { AgentError, asAgentError } from '../errors';
import { ConnectRequestSchema, type ProcessEvent, ProcessEventSchema, Process, StartRequestSchema } from '../../contract/gen/process_pb';
import { drainOrClose } from '../drain';
import { connect } from './connect';
import { start } from './start';

export const STREAM_PROCEDURES = new Set(['/process.Process/Start', '/process.Process/Connect']);

/** Whether this request is one the stream path answers: the JSON form of Start or Connect. */
export function isJsonStream(req: http.IncomingMessage, pathname: string): boolean {
  if (!STREAM_PROCEDURES.has(pathname) || req.method !== 'POST') return false;
  const type = (req.headers['content-type'] ?? '').toLowerCase().split(';', 1)[0]!.trim();
  return type === 'application/connect+json' && req.headers['connect-content-encoding'] === undefined;
}

function envelope(flags: number, json: string): Buffer {
  return encodeEnvelope(flags, Buffer.from(json, 'utf8'));
}

/** One event as a frame; data events are assembled as bytes (base64 is ASCII), without a JSON text in between. */
function eventFrame(ev: ProcessEvent): Buffer {
  if (ev.event.case === 'data' && ev.event.value.output.case) {
    const bytes = ev.event.value.output.value;
    const b64 = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
    const head = `{"event":{"data":{"${ev.event.value.output.case}":"`;
    const tail = '"}}}';
    const frame = allocEnvelope(0, head.length + b64.length + tail.length);
    let at = ENVELOPE_HEAD_BYTES + frame.write(head, ENVELOPE_HEAD_BYTES, 'latin1');
    at += frame.write(b64, at, 'latin1');
    frame.write(tail, at, 'latin1');
    return frame;
  }
  return envelope(0, JSON.stringify({ event: toJson(ProcessEventSchema, ev) }));
}

function write(res: http.ServerResponse, frame: Buffer): Promise<void> {
  return res.write(frame) ? Promise.resolve() : drainOrClose(res);
}

export async function serveJsonStream(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  pathname: string,
  timeoutMs: number | undefined,
  svc: AgentServices,
): Promise<void> {
  const version = req.headers['connect-protocol-version'];
  if (version !== '1') {
    throw new AgentError(
      Code.InvalidArgument,
      `Connect-Protocol-Version ${version === undefined ? 'is missing' : JSON.stringify(version) + ' is not supported'}: it must be 1`,
    );
  }
  const raw = await readBody(req, MAX_MESSAGE_BYTES);
  if (res.headersSent) return; // the deadline passed while the body arrived, and was answered (server.ts)
  const { frames, rest } = splitEnvelopes(raw);
  if (frames.length !== 1 || rest.length > 0) {
    throw new AgentError(
      Code.InvalidArgument,
      'the request body must be exactly one Connect envelope (flags byte, 4-byte length, message)',
    );
  }
  const request = frames[0]!;
  if (request.flags !== 0)
    throw new AgentError(Code.InvalidArgument, `request envelope flags ${request.flags} are not supported (only 0: uncompressed message)`);
  let json: unknown;
  try {
    json = JSON.parse(request.message.toString('utf8'));
  } catch (err) {
    throw new AgentError(Code.InvalidArgument, `request message is not valid JSON: ${(err as Error).message}`);
  }

  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  const isStart = pathname.endsWith('/Start');
  const ctx: HandlerContext = createHandlerContext({
    service: Process,
    method: isStart ? Process.method.start : Process.method.connect,
    protocolName: 'connect',
    requestMethod: 'POST',
    url: req.url ?? pathname,
    requestSignal: abort.signal,
    requestHeader: headersOf(req),
    contextValues: createContextValues().set(deadlineKey, timeoutMs),
  });

  res.writeHead(200, { 'content-type': 'application/connect+json' });
  let end = '{}';
  try {
    const events = isStart ? start(svc, decode(StartRequestSchema, json), ctx) : connect(svc, decode(ConnectRequestSchema, json), ctx);
    for await (const r of events) {
      if (abort.signal.aborted) break;
      if (r.event) await write(res, eventFrame(r.event));
    }
  } catch (err) {
    const e = asAgentError(err, Code.Unknown);
    end = JSON.stringify({ error: { code: codeName(e.code), message: e.rawMessage } });
  }
  if (!res.destroyed) res.end(envelope(END_STREAM_FLAG, end));
}

function decode<S extends typeof StartRequestSchema | typeof ConnectRequestSchema>(schema: S, json: unknown) {
  try {
    return fromJson(schema, json as never);
  } catch (err) {
    throw new AgentError(Code.InvalidArgument, `invalid ${schema.typeName}: ${(err as Error).message}`);
  }
}

function headersOf(req: http.IncomingMessage): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (typeof v === 'string') h.set(k, v);
    else if (Array.isArray(v)) for (const item of v) h.append(k, item);
  }
  return h;
}
