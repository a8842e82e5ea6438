/**
 * One directory watch (WatchDir streams it, CreateWatcher keeps it for polling): Node's fs.watch (inotify; in
 * recursive mode one watch per directory, new subdirectories included), with its two event kinds turned into the
 * service's: a `rename` of a name that now exists is CREATE, of one that is gone REMOVE; a `change` is WRITE.
 * Names are relative to the watched directory.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EventType } from '../gen/filesystem_pb';

export interface WatchEvent {
  name: string;
  type: EventType;
  /** Absolute path of the entry, for clients that asked for its EntryInfo. */
  fullPath: string;
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
      if (filename === null) return;
      const fullPath = path.join(dir, filename);
      let type: EventType;
      if (kind === 'change') type = EventType.WRITE;
      else type = fs.existsSync(fullPath) ? EventType.CREATE : EventType.REMOVE;
      onEvent({ name: filename, type, fullPath });
    });
    this.watcher.on('error', onError);
  }

  close(): void {
    this.watcher.close();
  }
}
