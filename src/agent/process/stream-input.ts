/** Process.StreamInput (client streaming): a start event naming the process, then input events, in order. */
import { create } from '@bufbuild/protobuf';
import { Code } from '../../contract/connect-codes';
import { AgentError } from '../errors';
import type { AgentServices } from '../call-context';
import {
  type ProcessSelector,
  type StreamInputRequest,
  type StreamInputResponse,
  StreamInputResponseSchema,
} from '../../contract/gen/process_pb';
import { deliver } from './send-input';

export async function streamInput(svc: AgentServices, requests: AsyncIterable<StreamInputRequest>): Promise<StreamInputResponse> {
  let selector: ProcessSelector | undefined;
  for await (const r of requests) {
    const ev = r.event;
    if (ev.case === 'start') {
      selector = ev.value.process;
      svc.processes.find(selector);
    } else if (ev.case === 'data') {
      if (!selector) throw new AgentError(Code.InvalidArgument, 'StreamInput: the first message must be a "start" naming the process');
      await deliver(svc, selector, ev.value.input);
    }
  }
  return create(StreamInputResponseSchema, {});
}
