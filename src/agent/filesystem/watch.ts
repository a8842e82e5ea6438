/**
 * One directory watch (WatchDir streams it, CreateWatcher keeps it for polling): Node's fs.watch (inotify; in
 * recursive mode one watch per directory, new subdirectories included), with its two event kinds turned into the
 * service's: a `rename` of a name that now exists is CREATE (WRITE when an upload just replaced it), of one that is
 * gone REMOVE; a `change` is WRITE, or CHMOD when only the inode changed (ctime moved past mtime). A name moved away
 * is a REMOVE: Node's watch does not say where it went. Upload temporaries are not reported. Names are relative to
 * the watched directory. Kinds are named here and given the service's EventType numbers where a message is made
 * (watch-dir.ts), so a watch loads no protobuf descriptors.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isUploadTemp, wasJustReplaced } from './upload-trace';

/** The service's event types (EventType in filesystem.proto) a watch reports. */
export type WatchEventKind = 'create' | 'write' | 'remove' | 'chmod';

export interface WatchEvent {
  name: string;
  type: WatchEventKind;
  /** Absolute path of the entry, for clients that asked for its EntryInfo. */
  fullPath: string;
}

function eventType(kind: 'rename' | 'change', fullPath: string): WatchEventKind {
  const st = fs.lstatSync(fullPath, { throwIfNoEntry: false });
  if (st === undefined) return 'remove';
  if (kind === 'rename') return wasJustReplaced(fullPath) ? 'write' : 'create';
  return st.ctimeMs > st.mtimeMs ? 'chmod' : 'write';
}

export class DirWatch {
  private readonly watcher: fs.FSWatcher;

  constructor(
    readonly dir: string,
    recursive: boolean,
    onEvent: (e: WatchEvent) => void,
    onError: (err: Error) => void,
  ) {
    this.watcher = fs.watch(dir, { recursive, encoding: 'utf8' }, (kind, filename) => {
      if (filename === null || isUploadTemp(filename)) return;
      const fullPath = path.join(dir, filename);
      onEvent({ name: filename, type: eventType(kind, fullPath), fullPath });
    });
    this.watcher.on('error', onError);
  }

  close(): void {
    this.watcher.close();
  }
}
