import { randomUUID } from 'node:crypto';
import { LOWER_ALNUM, randomText } from '../../util/random-text';
import { SANDBOX_ID_LENGTH } from '../sandboxes/ids';

/** Template IDs are made like sandbox IDs: lower-case letters and digits, uniformly drawn (host names carry them). */
export function newTemplateID(): string {
  return randomText(LOWER_ALNUM, SANDBOX_ID_LENGTH);
}

/** Build IDs are UUIDs, as E2B's are. */
export function newBuildID(): string {
  return randomUUID();
}
