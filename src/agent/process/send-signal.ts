/** Process.SendSignal: SIGTERM or SIGKILL to the process's group. */
import { create } from '@bufbuild/protobuf';
import { Code } from '../../contract/connect-codes';
import { AgentError } from '../errors';
import type { AgentServices } from '../call-context';
import { type SendSignalRequest, type SendSignalResponse, SendSignalResponseSchema, Signal } from '../../contract/gen/process_pb';

export function sendSignal(svc: AgentServices, req: SendSignalRequest): SendSignalResponse {
  const sig = req.signal === Signal.SIGKILL ? 'SIGKILL' : req.signal === Signal.SIGTERM ? 'SIGTERM' : undefined;
  if (!sig) throw new AgentError(Code.InvalidArgument, `field "signal" must be SIGNAL_SIGTERM or SIGNAL_SIGKILL, got ${req.signal}`);
  svc.processes.find(req.process).signal(sig);
  return create(SendSignalResponseSchema, {});
}
