/** Files a node sees under /etc: written into the node's overlay layer directory, never into the real /etc. */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface LayerFile {
  /** Absolute path the node sees, under /etc. */
  path: string;
  content: string;
  mode: number;
}

/** Where a file with node path `path` is stored in the layer. */
export function layerPath(layer: string, path: string): string {
  if (!path.startsWith('/etc/') || path.includes('/../')) throw new Error(`lab can only place files under /etc, got ${path}`);
  return join(layer, path.slice('/etc/'.length));
}

export function writeLayerFiles(layer: string, files: readonly LayerFile[]): void {
  for (const f of files) {
    const target = layerPath(layer, f.path);
    mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
    writeFileSync(target, f.content, { mode: f.mode });
    chmodSync(target, f.mode);
  }
}
