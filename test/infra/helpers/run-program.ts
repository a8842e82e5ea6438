import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as pulumi from '@pulumi/pulumi';
import { createStack, type StackOutputs } from '../../../infra/program';
import { mockCloud, type MockCloud } from './mock-cloud';

/** Resolves an output's value under the mocks. */
export function valueOf<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => {
    output.apply((v) => {
      resolve(v);
      return v;
    });
  });
}

export interface RecordedOptions {
  type: string;
  opts: pulumi.CustomResourceOptions;
}

export interface PasswordSetting {
  value: string;
  /** Whether the stack stores it as a secret (`pulumi config set --secret`). */
  secret: boolean;
}

export interface ProgramRun {
  cloud: MockCloud;
  outputs: StackOutputs;
  /** Every stack output, resolved. */
  values: Record<Exclude<keyof StackOutputs, 'egressMode' | 'sshUser' | 'templateAlias'>, string> &
    Pick<StackOutputs, 'egressMode' | 'sshUser' | 'templateAlias'>;
  /** The fake release bundle the run deployed. */
  bundleDir: string;
  /** Resource options of every resource below the components, by resource name. */
  options: Map<string, RecordedOptions>;
}

/** An SSH private key for the template build (a fake: the mocks never log in). */
export const SSH_PRIVATE_KEY = '-----BEGIN OPENSSH PRIVATE KEY-----\nbW9jay1rZXk=\n-----END OPENSSH PRIVATE KEY-----\n';

export interface ExtraSecrets {
  /** sandbox-kit:sshPrivateKey, always stored as a secret. */
  sshPrivateKey?: string;
}

const madeBundles: string[] = [];
// The fake bundles go when the test file ends (a jest worker is stopped by a signal: no 'exit' handler would run).
afterAll(() => {
  for (const dir of madeBundles.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A release bundle directory with the two files the hosts run; contents vary with `release`. */
export function fakeBundle(release = 'r1'): string {
  const parent = mkdtempSync(join(tmpdir(), 'skt-bundle-'));
  madeBundles.push(parent);
  const dir = join(parent, 'bundle');
  mkdirSync(dir);
  writeFileSync(join(dir, 'sandbox-kit.js'), `// cli ${release}\n`);
  writeFileSync(join(dir, 'agent.js'), `// agent ${release}\n`);
  return dir;
}

/** Sets a stack's `sandbox-kit:` config the way the Pulumi engine hands it to a program (objects as JSON text). */
export function setStackConfig(values: Record<string, unknown>, password?: PasswordSetting, extra: ExtraSecrets = {}): void {
  const all: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) all[`sandbox-kit:${key}`] = typeof value === 'string' ? value : JSON.stringify(value);
  const secretKeys: string[] = [];
  if (password) {
    all['sandbox-kit:proxyPassword'] = password.value;
    if (password.secret) secretKeys.push('sandbox-kit:proxyPassword');
  }
  if (extra.sshPrivateKey !== undefined) {
    all['sandbox-kit:sshPrivateKey'] = extra.sshPrivateKey;
    secretKeys.push('sandbox-kit:sshPrivateKey');
  }
  all['aws:region'] = 'eu-west-1';
  pulumi.runtime.setAllConfig(all, secretKeys);
}

export interface RunOptions extends ExtraSecrets {
  /** The release bundle to deploy; default a fresh fake one (the same contents every time). */
  bundleDir?: string;
}

const sharedBundle = fakeBundle();

/** Runs the whole program once against a fresh mock cloud and waits until every resource is registered. */
export async function runProgram(values: Record<string, unknown>, password?: PasswordSetting, run: RunOptions = {}): Promise<ProgramRun> {
  const cloud = mockCloud();
  await pulumi.runtime.setMocks(cloud.mocks, 'sandbox-kit', 'test', false);
  setStackConfig(values, password, run);
  const options = new Map<string, RecordedOptions>();
  const created: pulumi.Resource[] = [];
  const record: pulumi.ResourceTransformation = (args) => {
    options.set(args.name, { type: args.type, opts: args.opts as pulumi.CustomResourceOptions });
    created.push(args.resource);
    return undefined;
  };
  const bundleDir = run.bundleDir ?? sharedBundle;
  const outputs = createStack({ componentOptions: { transformations: [record] }, bundleDir });
  const values_: Record<string, unknown> = {};
  await Promise.all(
    Object.entries(outputs).map(async ([key, value]) => {
      values_[key] = pulumi.Output.isInstance(value) ? await valueOf(value as pulumi.Output<unknown>) : value;
    }),
  );
  await Promise.all(created.map((r) => valueOf(r.urn)));
  // Resources made inside an apply (the sandbox security rules) register a moment later.
  await new Promise((resolve) => setTimeout(resolve, 50));
  return { cloud, outputs, values: values_ as ProgramRun['values'], options, bundleDir };
}

/** The recorded resource of a type and name; fails clearly when absent. */
export function resource(run: ProgramRun, type: string, name: string) {
  const found = run.cloud.resources.filter((r) => r.type === type && r.name === name);
  if (found.length !== 1) throw new Error(`expected one ${type} named ${name}, found ${found.length}`);
  return found[0];
}
