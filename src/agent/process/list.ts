/** Process.List: every running process the agent started, with the config it was started with (clients need it). */
import { create } from '@bufbuild/protobuf';
import type { AgentServices } from '../call-context';
import { type ListResponse, ListResponseSchema } from '../../contract/gen/process_pb';

export function list(svc: AgentServices): ListResponse {
  return create(ListResponseSchema, {
    processes: svc.processes.all().map((p) => ({
      pid: p.pid,
      ...(p.tag !== undefined ? { tag: p.tag } : {}),
      config: { cmd: p.config.cmd, args: p.config.args, envs: p.config.envs, ...(p.config.cwd !== undefined ? { cwd: p.config.cwd } : {}) },
    })),
  });
}
