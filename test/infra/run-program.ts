import * as pulumi from '@pulumi/pulumi';
import { createStack, type StackOutputs } from '../../infra/program';
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
  values: Record<Exclude<keyof StackOutputs, 'egressMode' | 'sshUser'>, string> & Pick<StackOutputs, 'egressMode' | 'sshUser'>;
  /** Resource options of every resource below the components, by resource name. */
  options: Map<string, RecordedOptions>;
}

/** Sets a stack's `sandbox-kit:` config the way the Pulumi engine hands it to a program (objects as JSON text). */
export function setStackConfig(values: Record<string, unknown>, password?: PasswordSetting): void {
  const all: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) all[`sandbox-kit:${key}`] = typeof value === 'string' ? value : JSON.stringify(value);
  const secretKeys: string[] = [];
  if (password) {
    all['sandbox-kit:proxyPassword'] = password.value;
    if (password.secret) secretKeys.push('sandbox-kit:proxyPassword');
  }
  all['aws:region'] = 'eu-west-1';
  pulumi.runtime.setAllConfig(all, secretKeys);
}

/** Runs the whole program once against a fresh mock cloud and waits until every resource is registered. */
export async function runProgram(values: Record<string, unknown>, password?: PasswordSetting): Promise<ProgramRun> {
  const cloud = mockCloud();
  await pulumi.runtime.setMocks(cloud.mocks, 'sandbox-kit', 'test', false);
  setStackConfig(values, password);
  const options = new Map<string, RecordedOptions>();
  const created: pulumi.Resource[] = [];
  const record: pulumi.ResourceTransformation = (args) => {
    options.set(args.name, { type: args.type, opts: args.opts as pulumi.CustomResourceOptions });
    created.push(args.resource);
    return undefined;
  };
  const outputs = createStack({ componentOptions: { transformations: [record] } });
  const [ingressIp, egressIp, clientConfigLocal, clientConfigTransparent, natChainScript, sshHost, verifyCommand] = await Promise.all([
    valueOf(outputs.ingressIp),
    valueOf(outputs.egressIp),
    valueOf(outputs.clientConfigLocal),
    valueOf(outputs.clientConfigTransparent),
    valueOf(outputs.natChainScript),
    valueOf(outputs.sshHost),
    valueOf(outputs.verifyCommand),
  ]);
  await Promise.all(created.map((r) => valueOf(r.urn)));
  return {
    cloud,
    outputs,
    values: {
      ingressIp,
      egressIp,
      egressMode: outputs.egressMode,
      clientConfigLocal,
      clientConfigTransparent,
      natChainScript,
      sshUser: outputs.sshUser,
      sshHost,
      verifyCommand,
    },
    options,
  };
}

/** The recorded resource of a type and name; fails clearly when absent. */
export function resource(run: ProgramRun, type: string, name: string) {
  const found = run.cloud.resources.filter((r) => r.type === type && r.name === name);
  if (found.length !== 1) throw new Error(`expected one ${type} named ${name}, found ${found.length}`);
  return found[0];
}
