/**
 * Stat and ListDir, answered without the Connect router: they are the hot procedures of every file browser and
 * the only ones whose answers can be large. Their bodies are written by the agent's own JSON writer (entry.ts) as
 * ~64 KiB chunks while the walk runs, never as an array of message objects; docs/agent.md has the measured memory
 * and CPU of both ways. The request side follows the same rules as the router's.
 *
 * Memory of all ListDir answers together is one budget (--max-response-bytes): an answer that would push the
 * total past it fails with resource_exhausted, and an answer a client takes nothing of for --stall-timeout-ms is dropped
 * with its connection, so a client that stops reading cannot pin memory. A walk ends at the call's deadline
 * (deadline_exceeded; the server answers at that moment, server.ts) or after listTimeoutMs (resource_exhausted),
 * whichever comes first.
 */
import type * as http from 'node:http';
import { requestUser } from '../auth';
import type { AgentServices } from '../call-context';
import { checkProtocolHeaders, parseJsonBody, readBody } from '../connect-protocol';
import { AgentError } from '../errors';
import { listDir } from './list-dir';
import { stat } from './stat';
import { decodeListDirRequest, decodeStatRequest } from './requests';
import { sendError } from '../send-error';
import { Code } from '../../contract/connect-codes';

export const FAST_PROCEDURES = new Set(['Stat', 'ListDir']);

/** Bytes held by ListDir answers and their walks' batches, across all calls. */
export class ResponseBudget {
  private used = 0;
  constructor(readonly limit: number) {}

  reserve(bytes: number): void {
    if (this.used + bytes > this.limit) {
      throw new AgentError(
        Code.ResourceExhausted,
        `the agent holds ${this.used} bytes of unsent ListDir answers and this one would pass its --max-response-bytes (${this.limit}); retry later or list less`,
      );
    }
    this.used += bytes;
  }

  release(bytes: number): void {
    this.used -= bytes;
  }

  get inUse(): number {
    return this.used;
  }
}

class Call {
  clientGone = false;
  private readonly started = Date.now();
  constructor(
    readonly deadline: number | undefined,
    private readonly walkLimitMs: number,
  ) {}

  stopReason(): AgentError | undefined {
    if (this.clientGone) return new AgentError(Code.Canceled, 'the client closed the connection');
    if (this.deadline !== undefined && Date.now() >= this.deadline) return deadlineError();
    if (Date.now() - this.started >= this.walkLimitMs) {
      return new AgentError(
        Code.ResourceExhausted,
        `the walk took longer than the agent's limit of ${this.walkLimitMs} ms (listTimeoutMs); list a smaller depth or a subdirectory`,
      );
    }
    return undefined;
  }
}

function deadlineError(): AgentError {
  return new AgentError(Code.DeadlineExceeded, 'the call did not finish within its Connect-Timeout-Ms');
}

export async function fastPath(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  procedure: string,
  ms: number | undefined,
  svc: AgentServices,
  budget: ResponseBudget,
): Promise<void> {
  const call = new Call(ms === undefined ? undefined : Date.now() + ms, svc.options.listTimeoutMs);
  res.on('close', () => {
    if (!res.writableFinished) call.clientGone = true;
  });
  try {
    checkProtocolHeaders(req);
    const user = requestUser(req.headers.authorization, svc.accounts, svc.state.defaultUser);
    const body = parseJsonBody(await readBody(req, svc.options.maxBodyBytes), true);
    if (procedure === 'Stat') {
      const json = stat(decodeStatRequest(body), user, svc.entries);
      throwIfStopped(call);
      if (res.headersSent) return;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
      res.end(json);
      return;
    }
    const request = decodeListDirRequest(body);
    const chunks = await listDir(
      request,
      user,
      svc.entries,
      { maxEntries: svc.options.maxEntries, stopReason: () => call.stopReason() },
      budget,
      svc.buffers,
    );
    try {
      throwIfStopped(call);
      if (res.headersSent) return;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': chunks.byteLength });
      await chunks.writeTo(res, svc.options.stallTimeoutMs);
    } finally {
      chunks.dispose();
    }
  } catch (err) {
    if (!(err instanceof AgentError)) throw err;
    sendError(req, res, err);
  }
}

function throwIfStopped(call: Call): void {
  const stop = call.stopReason();
  if (stop) throw stop;
}
