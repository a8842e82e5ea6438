/** The EntryInfo of a path as a protobuf message, for procedures answered through the Connect router. */
import * as fs from 'node:fs';
import { fromJson } from '@bufbuild/protobuf';
import { describeEntry, type EntryContext } from './entry';
import { type EntryInfo, EntryInfoSchema } from '../../contract/gen/filesystem_pb';
import { baseName } from '../paths';

export function entryMessage(p: Buffer, ctx: EntryContext): EntryInfo | undefined {
  const st = fs.lstatSync(p, { bigint: true, throwIfNoEntry: false });
  if (!st) return undefined;
  return fromJson(EntryInfoSchema, JSON.parse(describeEntry(p, baseName(p), st, ctx)));
}
