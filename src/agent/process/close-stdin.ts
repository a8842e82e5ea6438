/** Process.CloseStdin: ends the process's input (it reads end-of-file). */
import { create } from '@bufbuild/protobuf';
import type { AgentServices } from '../call-context';
import { type CloseStdinRequest, type CloseStdinResponse, CloseStdinResponseSchema } from '../../contract/gen/process_pb';

export function closeStdin(svc: AgentServices, req: CloseStdinRequest): CloseStdinResponse {
  svc.processes.find(req.process).closeStdin();
  return create(CloseStdinResponseSchema, {});
}
