/** The flags every administration command takes, and the quota flags of `team create` and `team quota`. */
import { z } from 'zod';
import { text } from '../../config/fields';
import type { Quotas } from '../../platform/teams/model';
import { switchFlag, valueFlag } from '../args';

export const targetFlags = {
  'api-url': valueFlag(text(/^https?:\/\/\S+$/, 'an http(s):// URL of the platform API').optional()),
  'api-key-file': valueFlag(z.string().min(1).optional()),
  json: switchFlag(),
};

const QUOTA_FLAG_TO_FIELD = {
  sandboxes: 'sandboxes',
  vcpus: 'vcpus',
  'memory-mib': 'memoryMiB',
  builds: 'builds',
  'template-bytes': 'templateBytes',
  'max-timeout': 'maxTimeoutSeconds',
  'requests-per-second': 'requestsPerSecond',
} as const satisfies Record<string, keyof Quotas>;

// The bounds are the platform's (it answers which one a value passes); here only the form: a count or "none".
const quotaValue = valueFlag(
  text(/^(\d{1,16}|none)$/, 'a whole number, or none for no limit')
    .transform((v) => (v === 'none' ? null : Number(v)))
    .optional(),
);
export const quotaFlags = Object.fromEntries(Object.keys(QUOTA_FLAG_TO_FIELD).map((f) => [f, quotaValue])) as Record<
  keyof typeof QUOTA_FLAG_TO_FIELD,
  typeof quotaValue
>;

export const QUOTA_HELP = `Quotas (a whole number, or none for no limit; unset ones stay as they are):
  --sandboxes N            concurrent sandboxes (running and paused)
  --vcpus N                total vCPUs of the team's sandboxes
  --memory-mib N           total MiB of the team's sandboxes
  --builds N               concurrent template builds
  --template-bytes N       stored template upload bytes
  --max-timeout N          the longest sandbox timeout, in seconds
  --requests-per-second N  API requests per second, per key`;

export function quotasFrom(values: Partial<Record<keyof typeof QUOTA_FLAG_TO_FIELD, number | null | undefined>>): Quotas {
  const quotas: Quotas = {};
  for (const [flag, field] of Object.entries(QUOTA_FLAG_TO_FIELD)) {
    const v = values[flag as keyof typeof QUOTA_FLAG_TO_FIELD];
    if (v !== undefined) quotas[field] = v;
  }
  return quotas;
}
