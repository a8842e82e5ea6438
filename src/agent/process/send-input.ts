/** Process.SendInput and the input half of StreamInput: bytes to the process's stdin (or its terminal). */
import { create } from '@bufbuild/protobuf';
import { Code } from '../../contract/connect-codes';
import { AgentError } from '../errors';
import type { AgentServices } from '../call-context';
import {
  type ProcessInput,
  type ProcessSelector,
  type SendInputRequest,
  type SendInputResponse,
  SendInputResponseSchema,
} from '../../contract/gen/process_pb';

export async function sendInput(svc: AgentServices, req: SendInputRequest): Promise<SendInputResponse> {
  await deliver(svc, req.process, req.input);
  return create(SendInputResponseSchema, {});
}

export async function deliver(svc: AgentServices, selector: ProcessSelector | undefined, input: ProcessInput | undefined): Promise<void> {
  const proc = svc.processes.find(selector);
  const chosen = input?.input;
  if (!chosen?.case) throw new AgentError(Code.InvalidArgument, 'field "input" must carry "stdin" or "pty" bytes');
  if (chosen.case === 'pty' && !proc.pty) throw new AgentError(Code.InvalidArgument, `process ${proc.pid} has no terminal: send "stdin"`);
  try {
    await proc.writeStdin(Buffer.from(chosen.value));
  } catch (err) {
    throw new AgentError(Code.FailedPrecondition, `process ${proc.pid}: its input is closed (${(err as Error).message})`);
  }
}
