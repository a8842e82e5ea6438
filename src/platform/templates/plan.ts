/**
 * Turns the SDK's step JSON into steps the builder executes, checking each one first. Every problem of every step is
 * reported at once, each naming the step (1-based, as the SDK numbers them), what was given and what is accepted.
 */
import { posix } from 'node:path';
import { ecrRegion, isGcpRegistry, parseImageReference } from '../../runtime/images/reference';
import type { RegistryCredentials } from '../../runtime/images/skopeo';
import { BASE_IMAGE } from '../sandboxes/base-template';
import { BASE_STEP, type RegistryConfig, STEP_TYPES, type StartBuildBody, type Step, type StepType } from './wire';

export type PlannedStep =
  | { kind: 'RUN'; step: Step; command: string; user?: string }
  | { kind: 'COPY'; step: Step; src: string; dest: string; owner?: string; mode?: number; filesHash: string }
  | { kind: 'ENV'; step: Step; pairs: Array<[string, string]> }
  | { kind: 'WORKDIR'; step: Step; path: string }
  | { kind: 'USER'; step: Step; user: string };

export interface StepProblem {
  /** '1'..'n', the step's position. */
  step: string;
  message: string;
}

const USER_NAME = /^[a-z_][a-z0-9_-]{0,31}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function describeStep(step: Pick<Step, 'type' | 'args'>): string {
  const text = `${step.type} ${step.args.filter((a) => a !== '').join(' ')}`.trim();
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/** A COPY source must stay inside the uploaded context: relative, and never climbing out with `..`. */
export function copySourceProblem(src: string): string | undefined {
  if (src === '') return "the COPY source is empty; expected a path relative to the template's file context";
  if (src.startsWith('/'))
    return `the COPY source ${JSON.stringify(src)} is absolute; expected a path relative to the template's file context`;
  const normal = posix.normalize(src);
  if (normal === '..' || normal.startsWith('../')) {
    return `the COPY source ${JSON.stringify(src)} is outside the template's file context; expected a path inside it (no leading ..)`;
  }
  return undefined;
}

function planOne(step: Step): PlannedStep | string {
  const type = step.type as StepType;
  const args = step.args;
  switch (type) {
    case 'RUN': {
      const [command, user] = args;
      if (!command) return 'RUN needs a command as its first argument';
      if (user && !USER_NAME.test(user)) return `RUN user ${JSON.stringify(user)} is not a Unix user name`;
      return { kind: 'RUN', step, command, user: user || undefined };
    }
    case 'COPY': {
      const [src = '', dest = '', owner = '', mode = ''] = args;
      const srcProblem = copySourceProblem(src);
      if (srcProblem) return srcProblem;
      if (dest === '') return 'COPY needs a destination as its second argument';
      if (`${src}${dest}`.includes('\0')) return 'COPY source and destination may not hold a NUL byte';
      if (owner !== '' && !USER_NAME.test(owner)) return `COPY owner ${JSON.stringify(owner)} is not a Unix user name`;
      if (mode !== '' && !/^[0-7]{3,4}$/.test(mode)) return `COPY mode ${JSON.stringify(mode)} is not an octal file mode such as 0644`;
      if (!step.filesHash) return 'COPY has no filesHash; the SDK computes it from the files and uploads them under it';
      return {
        kind: 'COPY',
        step,
        src,
        dest,
        owner: owner || undefined,
        mode: mode === '' ? undefined : Number.parseInt(mode, 8),
        filesHash: step.filesHash,
      };
    }
    case 'ENV': {
      if (args.length === 0 || args.length % 2 !== 0) return `ENV needs name/value pairs; got ${args.length} argument(s)`;
      const pairs: Array<[string, string]> = [];
      for (let i = 0; i < args.length; i += 2) {
        if (!ENV_NAME.test(args[i]!)) return `ENV name ${JSON.stringify(args[i])} is not a variable name (letters, digits, _)`;
        pairs.push([args[i]!, args[i + 1]!]);
      }
      return { kind: 'ENV', step, pairs };
    }
    case 'WORKDIR': {
      const [path] = args;
      if (!path) return 'WORKDIR needs a path';
      return { kind: 'WORKDIR', step, path };
    }
    case 'USER': {
      const [user] = args;
      if (!user || !USER_NAME.test(user)) return `USER ${JSON.stringify(user ?? '')} is not a Unix user name`;
      return { kind: 'USER', step, user };
    }
    default:
      return `unknown step type ${JSON.stringify(step.type)}; supported: ${STEP_TYPES.join(', ')}`;
  }
}

export function planSteps(steps: Step[]): { ok: true; plan: PlannedStep[] } | { ok: false; problems: StepProblem[] } {
  const plan: PlannedStep[] = [];
  const problems: StepProblem[] = [];
  steps.forEach((step, i) => {
    const planned = planOne(step);
    if (typeof planned === 'string') problems.push({ step: String(i + 1), message: `step ${i + 1} (${describeStep(step)}): ${planned}` });
    else plan.push(planned);
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, plan };
}

/** `$NAME` and `${NAME}` in an ENV value take the value set so far (as a Dockerfile's ENV does); unknown ones are empty. */
export function expandEnv(value: string, envs: Record<string, string>): string {
  return value.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (_m, a: string | undefined, b: string | undefined) => envs[(a ?? b)!] ?? '',
  );
}

/** Parses `fromImage`: the Debian images made offline (by mmdebstrap); `debian` alone means stable. */
export function debianImage(fromImage: string, supported: readonly string[]): { ok: true; image: string } | { ok: false; message: string } {
  const [name, tag = 'stable'] = fromImage.split(':');
  const suite = tag === 'latest' ? 'stable' : tag;
  const accepted = supported.map((s) => `debian:${s}`).join(', ');
  if ((name !== 'debian' && name !== 'docker.io/library/debian' && name !== 'library/debian') || !supported.includes(suite)) {
    return {
      ok: false,
      message: `base image ${JSON.stringify(fromImage)} is not one made offline; those are: ${accepted} (fromDebianImage('<suite>'))`,
    };
  }
  return { ok: true, image: `debian:${suite}` };
}

/** The image the SDK names when a template gives no base of its own (and `fromBaseImage()` names). */
export const SDK_DEFAULT_IMAGE = 'e2bdev/base';
/** The Debian image the kit's own `base` template is (sandboxes/base-template.ts), what `e2bdev/base` means offline. */
export const KIT_BASE_IMAGE = BASE_IMAGE;

/**
 * A build's base: another template's ready build, a Debian root filesystem made offline, or an image pulled from a
 * registry (with the credentials the SDK sent for it).
 */
export type BuildBase =
  | { kind: 'template'; name: string }
  | { kind: 'image'; image: string }
  | { kind: 'registry'; image: string; credentials?: RegistryCredentials };

export interface BuildPlan {
  base: BuildBase;
  steps: PlannedStep[];
}

export interface PlanOptions {
  /** Debian suites made offline. */
  supportedSuites: readonly string[];
  /** `e2bdev/base`: the kit's own base (`kit`, the default) or E2B's image from Docker Hub (`registry`). */
  e2bBase?: 'kit' | 'registry';
}

/** The SDK's registry config as the puller's credentials (a GCP key is the password of `_json_key`, as GCP's registries take it). */
export function credentialsOf(config: RegistryConfig | undefined): RegistryCredentials | undefined {
  if (!config) return undefined;
  switch (config.type) {
    case 'registry':
      return { username: config.username, password: config.password };
    case 'aws':
      return { ecr: { accessKeyId: config.awsAccessKeyId, secretAccessKey: config.awsSecretAccessKey, region: config.awsRegion } };
    case 'gcp':
      return { username: '_json_key', password: config.serviceAccountJson };
  }
}

function isJsonObject(text: string): boolean {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}

/**
 * Why the SDK's registry option cannot work for `registry`, or nothing: `fromAWSRegistry` keys are exchanged for a
 * token of ECR in their region, so the image must be on ECR in that region; a `fromGCPRegistry` key is taken only by
 * Google Cloud's registries. Said at once, instead of as a refusal by the registry after the pull started; a message
 * never repeats a key.
 */
export function registryMismatch(registry: string, config: RegistryConfig | undefined): string | undefined {
  if (config?.type === 'aws') {
    const region = ecrRegion(registry);
    if (region === undefined)
      return `fromAWSRegistry: ${registry} is not an Amazon ECR registry (<account>.dkr.ecr.<region>.amazonaws.com); use fromImage(image, { username, password }) for other registries`;
    if (region !== config.awsRegion)
      return `fromAWSRegistry: the registry ${registry} is in ${region}, but the region given is ${config.awsRegion}; ECR's tokens hold in their own region only`;
  }
  if (config?.type === 'gcp') {
    if (!isGcpRegistry(registry))
      return `fromGCPRegistry: ${registry} is not a Google Cloud registry (gcr.io, <location>.gcr.io, <location>-docker.pkg.dev); use fromImage(image, { username, password }) for other registries`;
    if (!isJsonObject(config.serviceAccountJson))
      return 'fromGCPRegistry: the service account key is not a JSON object (expected the key file of the service account, as Google Cloud gives it)';
  }
  return undefined;
}

/** `e2bdev/base` with any tag (or none), as the SDK's fromBaseImage() names it. */
function isE2bBase(image: string): boolean {
  return /^(?:docker\.io\/)?e2bdev\/base(?::[A-Za-z0-9._-]+)?$/.test(image.trim());
}

/** Which base `fromImage` means: Debian offline, the kit's base for `e2bdev/base`, else an image from its registry. */
export function imageBase(
  fromImage: string,
  registry: RegistryConfig | undefined,
  o: PlanOptions,
): { ok: true; base: BuildBase } | { ok: false; message: string } {
  const debian = debianImage(fromImage, o.supportedSuites);
  if (debian.ok && registry === undefined) return { ok: true, base: { kind: 'image', image: debian.image } };
  if (isE2bBase(fromImage) && (o.e2bBase ?? 'kit') === 'kit' && registry === undefined)
    return { ok: true, base: { kind: 'image', image: KIT_BASE_IMAGE } };
  const ref = parseImageReference(fromImage);
  if (!ref.ok) return { ok: false, message: `fromImage: ${ref.message}` };
  const mismatch = registryMismatch(ref.ref.registry, registry);
  if (mismatch !== undefined) return { ok: false, message: mismatch };
  // An ECR image named without credentials is pulled with the host's own (its instance role on AWS).
  const credentials = credentialsOf(registry) ?? (ecrRegion(ref.ref.registry) ? { ecr: {} } : undefined);
  return { ok: true, base: { kind: 'registry', image: fromImage.trim(), ...(credentials ? { credentials } : {}) } };
}

/**
 * Everything that can be told from the build request alone, worked out once: the base and every step. The service
 * answers 400 with the problems; the runner executes the plan.
 */
export function planBuild(
  body: Pick<StartBuildBody, 'fromImage' | 'fromTemplate' | 'fromImageRegistry' | 'steps'>,
  o: PlanOptions,
): { ok: true; plan: BuildPlan } | { ok: false; problems: StepProblem[] } {
  const problems: StepProblem[] = [];
  let base: BuildBase | undefined;
  if (body.fromTemplate !== undefined) base = { kind: 'template', name: body.fromTemplate };
  else {
    const image = imageBase(body.fromImage ?? SDK_DEFAULT_IMAGE, body.fromImageRegistry, o);
    if (image.ok) base = image.base;
    else problems.push({ step: BASE_STEP, message: image.message });
  }
  const planned = planSteps(body.steps as Step[]);
  if (!planned.ok) problems.push(...planned.problems);
  if (problems.length > 0 || !planned.ok || base === undefined) return { ok: false, problems };
  return { ok: true, plan: { base, steps: planned.plan } };
}
