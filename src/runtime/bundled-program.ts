/**
 * The runtime's helper programs (loop-mount.c, private-mounts.c, network/port-plug.c, network/netns-join.c), built by
 * scripts/build-native.ts and copied into dist/bundle of the project or release root, where the agent's and the
 * egress relay's bundles are found too.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bundleDir } from '../util/project-root';

/** The program `name` of dist/bundle; undefined when it is missing or not executable (a release zip that lost modes). */
export function bundledProgram(name: string): string | undefined {
  const program = path.join(bundleDir(), name);
  try {
    fs.accessSync(program, fs.constants.X_OK);
    return program;
  } catch {
    return undefined;
  }
}
