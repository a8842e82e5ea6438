/**
 * Process.Update: resizes a pty process's terminal. `stty -F` sets the size on the terminal device, and the kernel
 * sends SIGWINCH to its foreground process group, as a terminal emulator's resize does.
 */
import { execFile } from 'node:child_process';
import { create } from '@bufbuild/protobuf';
import { Code } from '../../contract/connect-codes';
import { AgentError } from '../errors';
import type { AgentServices } from '../call-context';
import { type UpdateRequest, type UpdateResponse, UpdateResponseSchema } from '../../contract/gen/process_pb';

export async function update(svc: AgentServices, req: UpdateRequest): Promise<UpdateResponse> {
  const proc = svc.processes.find(req.process);
  const size = req.pty?.size;
  if (!size) return create(UpdateResponseSchema, {});
  if (!proc.pty) throw new AgentError(Code.FailedPrecondition, `process ${proc.pid} has no terminal to resize`);
  if (size.cols < 1 || size.rows < 1 || size.cols > 65535 || size.rows > 65535) {
    throw new AgentError(Code.InvalidArgument, `field "pty.size": cols and rows must be 1..65535, got ${size.cols}x${size.rows}`);
  }
  const tty = proc.terminalPath();
  if (!tty) throw new AgentError(Code.NotFound, `process ${proc.pid}: its terminal is gone`);
  await new Promise<void>((resolve, reject) => {
    execFile('stty', ['-F', tty, 'cols', String(size.cols), 'rows', String(size.rows)], (err, _out, stderr) =>
      err ? reject(new AgentError(Code.Internal, `resizing ${tty}: ${stderr.trim() || err.message}`)) : resolve(),
    );
  });
  return create(UpdateResponseSchema, {});
}
