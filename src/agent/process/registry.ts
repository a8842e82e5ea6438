/** The processes the agent started and that are still running, by pid; tags select them too. */
import { Code } from '../../contract/connect-codes';
import { AgentError } from '../errors';
import type { ProcessSelector } from '../../contract/gen/process_pb';
import type { ManagedProcess } from './managed-process';

export class ProcessRegistry {
  private readonly byPid = new Map<number, ManagedProcess>();

  add(p: ManagedProcess): void {
    this.byPid.set(p.pid, p);
    void p.exited.then(() => this.byPid.delete(p.pid));
  }

  all(): ManagedProcess[] {
    return [...this.byPid.values()];
  }

  /** The process a selector names, or not_found naming what was asked for. */
  find(selector: ProcessSelector | undefined): ManagedProcess {
    const sel = selector?.selector;
    if (sel?.case === 'pid') {
      const p = this.byPid.get(sel.value);
      if (p) return p;
      throw new AgentError(Code.NotFound, `no running process with pid ${sel.value} (started by this agent)`);
    }
    if (sel?.case === 'tag') {
      for (const p of this.byPid.values()) if (p.tag === sel.value) return p;
      throw new AgentError(Code.NotFound, `no running process with tag ${JSON.stringify(sel.value)}`);
    }
    throw new AgentError(Code.InvalidArgument, 'field "process" must select a process by "pid" or "tag"');
  }

  /** Ends every process (agent shutdown). */
  killAll(): void {
    for (const p of this.byPid.values()) p.signal('SIGKILL');
  }
}
