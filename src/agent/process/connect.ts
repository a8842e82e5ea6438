/** Process.Connect: attaches to a running process and streams its events from now on, like Start after its start. */
import { create } from '@bufbuild/protobuf';
import type { HandlerContext } from '@connectrpc/connect';
import { keepaliveMs, type AgentServices } from '../call-context';
import { type ConnectRequest, type ConnectResponse, ConnectResponseSchema } from '../../contract/gen/process_pb';
import { processEvents, startEvent } from './event-stream';

export async function* connect(svc: AgentServices, req: ConnectRequest, ctx: HandlerContext): AsyncGenerator<ConnectResponse> {
  const proc = svc.processes.find(req.process);
  yield create(ConnectResponseSchema, { event: startEvent(proc.pid) });
  for await (const event of processEvents(proc, keepaliveMs(ctx), ctx.signal)) {
    yield create(ConnectResponseSchema, { event });
  }
}
