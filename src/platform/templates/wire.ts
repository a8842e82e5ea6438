/**
 * The template build wire as the E2B SDK speaks it: request bodies (validated with zod at the edge), the step JSON the
 * builder produces, and the shapes the SDK reads back. Every problem of a body is reported at once, each naming its
 * field, what was given and what is accepted.
 */
import { z } from 'zod';
import { NAME_RULE, TAG, TAG_RULE, TEMPLATE_REF } from './names';

/** Build states the SDK knows: it polls while waiting/building and stops at ready/error. */
export type BuildStatus = 'waiting' | 'building' | 'ready' | 'error';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** One build log line as stored and as sent: `step` is 'base', '1'..'n' (the steps array, 1-based) or 'finalize'. */
export interface LogEntry {
  timestamp: string;
  level: LogLevel;
  message: string;
  step?: string;
}

export interface BuildReason {
  message: string;
  step?: string;
  logEntries?: LogEntry[];
}

/** The step types the kit executes. */
export const STEP_TYPES = ['RUN', 'COPY', 'ENV', 'WORKDIR', 'USER'] as const;
export type StepType = (typeof STEP_TYPES)[number];

export interface Step {
  type: StepType;
  args: string[];
  force: boolean;
  filesHash?: string;
}

/** The special step names of the log and of `reason.step` (the SDK maps them to its stack traces). */
export const BASE_STEP = 'base';
export const FINALIZE_STEP = 'finalize';

const NAME_PATTERN = TEMPLATE_REF;
const NAME_WHAT = `a template name of ${NAME_RULE}, optionally ":tag" (a tag: ${TAG_RULE})`;

const int = (min: number, max: number) =>
  z
    .number({ error: `expected an integer from ${min} to ${max}` })
    .int({ error: `expected an integer from ${min} to ${max}` })
    .min(min)
    .max(max);

export const createTemplateBody = z.object({
  name: z
    .string({ error: `expected ${NAME_WHAT}` })
    .regex(NAME_PATTERN, { error: `expected ${NAME_WHAT}` })
    .optional(),
  /** Older SDKs send `alias`. */
  alias: z
    .string({ error: `expected ${NAME_WHAT}` })
    .regex(NAME_PATTERN, { error: `expected ${NAME_WHAT}` })
    .optional(),
  tags: z.array(z.string().regex(TAG, { error: `expected tags of ${TAG_RULE}` })).optional(),
  cpuCount: int(1, 64).optional(),
  memoryMB: int(128, 65536).optional(),
  minFreeDiskMb: int(0, 1_048_576).optional(),
});
export type CreateTemplateBody = z.infer<typeof createTemplateBody>;

const stepSchema = z.object({
  type: z.string({ error: 'expected a step type' }),
  args: z.array(z.string({ error: 'expected string arguments' }), { error: 'expected args, a list of strings' }).default([]),
  force: z.boolean({ error: 'expected true or false' }).default(false),
  filesHash: z
    .string()
    .regex(/^[0-9a-f]{64}$/, { error: 'expected a 64-digit hex sha256' })
    .optional(),
  forceUpload: z.boolean().optional(),
  resolveSymlinks: z.boolean().optional(),
  gzip: z.boolean().optional(),
});

/**
 * The registry credentials the SDK sends with a base image: `fromImage(image, {username, password})` (`registry`),
 * `fromAWSRegistry` (`aws`: an access key of an IAM identity allowed to pull from ECR), `fromGCPRegistry` (`gcp`: a
 * service account key, which registries take as the password of the user `_json_key`).
 */
export const registryConfig = z.discriminatedUnion(
  'type',
  [
    z.object({
      type: z.literal('registry'),
      username: z.string({ error: 'expected the registry user name' }).min(1, { error: 'expected the registry user name' }),
      password: z.string({ error: 'expected the registry password' }).min(1, { error: 'expected the registry password' }),
    }),
    z.object({
      type: z.literal('aws'),
      awsAccessKeyId: z.string({ error: 'expected an AWS access key ID' }).min(1, { error: 'expected an AWS access key ID' }),
      awsSecretAccessKey: z.string({ error: 'expected an AWS secret access key' }).min(1, { error: 'expected an AWS secret access key' }),
      awsRegion: z.string({ error: 'expected an AWS region such as us-east-1' }).regex(/^[a-z]{2}(-[a-z]+)+-\d$/, {
        error: 'expected an AWS region such as us-east-1',
      }),
    }),
    z.object({
      type: z.literal('gcp'),
      serviceAccountJson: z
        .string({ error: 'expected the service account key (JSON)' })
        .min(2, { error: 'expected the service account key (JSON)' }),
    }),
  ],
  { error: 'expected registry credentials: {type: "registry", username, password}, {type: "aws", ...} or {type: "gcp", ...}' },
);
export type RegistryConfig = z.infer<typeof registryConfig>;

export const startBuildBody = z.object({
  fromImage: z.string({ error: 'expected an image name such as debian:bookworm' }).optional(),
  fromTemplate: z.string({ error: 'expected a template ID or alias' }).optional(),
  fromImageRegistry: registryConfig.optional(),
  startCmd: z.string({ error: 'expected a shell command' }).optional(),
  readyCmd: z.string({ error: 'expected a shell command' }).optional(),
  force: z.boolean({ error: 'expected true or false' }).default(false),
  steps: z.array(stepSchema, { error: 'expected steps, a list of {type, args}' }).default([]),
});
export type StartBuildBody = z.infer<typeof startBuildBody>;

/** Every issue of a zod error, one line each: `field: message (given: value)`. */
export function describeIssues(error: z.ZodError, input: unknown): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.join('.') || '(body)';
      let given: unknown = input;
      for (const key of issue.path)
        given = given !== null && typeof given === 'object' ? (given as Record<PropertyKey, unknown>)[key as PropertyKey] : undefined;
      return `${path}: ${issue.message} (given: ${given === undefined ? 'nothing' : JSON.stringify(given)})`;
    })
    .join('; ');
}

/** What a template looks like in `GET /templates`, the fields E2B's list gives. */
export interface ListedTemplate {
  templateID: string;
  buildID: string;
  cpuCount: number;
  memoryMB: number;
  diskSizeMB: number;
  public: boolean;
  aliases: string[];
  names: string[];
  createdAt: string;
  updatedAt: string;
  lastSpawnedAt: string | null;
  spawnCount: number;
  buildCount: number;
  envdVersion: string;
  buildStatus: BuildStatus;
}

const tagList = z
  .array(z.string({ error: `expected tags of ${TAG_RULE}` }).regex(TAG, { error: `expected tags of ${TAG_RULE}` }), {
    error: 'expected tags, a list of strings',
  })
  .min(1, { error: 'expected at least one tag' })
  .max(100, { error: 'expected at most 100 tags' });

/** `Template.assignTags(target, tags)`: target is `name:tag` (or `name`, the default tag). */
export const assignTagsBody = z.object({
  target: z.string({ error: 'expected the source as name:tag' }),
  tags: tagList,
});

/** `Template.removeTags(name, tags)`. */
export const removeTagsBody = z.object({
  name: z.string({ error: 'expected the template name' }),
  tags: tagList,
});
