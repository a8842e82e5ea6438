/**
 * The event stream shared by Start and Connect: data and end events as the process produces them, a keepalive
 * after every quiet `Keepalive-Ping-Interval`, until the end event or until the call is aborted (client gone,
 * deadline). The reader is detached in every case; the process is not touched.
 */
import { create } from '@bufbuild/protobuf';
import { type ProcessEvent, ProcessEventSchema } from '../../contract/gen/process_pb';
import type { ManagedProcess } from './managed-process';
import type { ProcessOutput } from './subscriber';

export function startEvent(pid: number): ProcessEvent {
  return create(ProcessEventSchema, { event: { case: 'start', value: { pid } } });
}

function toEvent(item: ProcessOutput): ProcessEvent {
  if (item.kind === 'data') {
    return create(ProcessEventSchema, { event: { case: 'data', value: { output: { case: item.stream, value: item.bytes } } } });
  }
  const end: { exitCode: number; exited: boolean; status: string; error?: string } = {
    exitCode: item.exitCode,
    exited: item.exited,
    status: item.status,
  };
  if (item.error !== undefined) end.error = item.error;
  return create(ProcessEventSchema, { event: { case: 'end', value: end } });
}

const KEEPALIVE = (): ProcessEvent => create(ProcessEventSchema, { event: { case: 'keepalive', value: {} } });

export async function* processEvents(proc: ManagedProcess, keepaliveMs: number, signal: AbortSignal): AsyncGenerator<ProcessEvent> {
  const sub = proc.subscribe();
  try {
    while (!signal.aborted) {
      const item = await sub.next(keepaliveMs, signal);
      if (signal.aborted) return;
      if (item === undefined) {
        yield KEEPALIVE();
        continue;
      }
      yield toEvent(item);
      if (item.kind === 'end') return;
    }
  } finally {
    proc.unsubscribe(sub);
  }
}
