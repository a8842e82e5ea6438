/** How a secret looks on the wire (E2B's `Secret`): its metadata, never its value. */
import type { SecretRecord } from './store';

export function secretInfo(record: SecretRecord) {
  return {
    secretID: record.secretID,
    name: record.name,
    currentVersion: record.currentVersion,
    metadata: record.metadata,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}
