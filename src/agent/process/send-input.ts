/** Process.SendInput and the input half of StreamInput: bytes to the process's stdin (or its terminal). */
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
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
  if (!chosen?.case) throw new ConnectError('field "input" must carry "stdin" or "pty" bytes', Code.InvalidArgument);
  if (chosen.case === 'pty' && !proc.pty) throw new ConnectError(`process ${proc.pid} has no terminal: send "stdin"`, Code.InvalidArgument);
  try {
    await proc.writeStdin(Buffer.from(chosen.value));
  } catch (err) {
    throw new ConnectError(`process ${proc.pid}: its input is closed (${(err as Error).message})`, Code.FailedPrecondition);
  }
}
