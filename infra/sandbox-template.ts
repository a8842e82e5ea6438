import { createHash } from 'node:crypto';
import * as command from '@pulumi/command';
import * as pulumi from '@pulumi/pulumi';
import type { StackConfig } from '../src/config';
import {
  renderBuildTemplateScript,
  renderStackFile,
  renderTemplateFiles,
  SANDBOX_HOST_PATHS,
  type ClientTarget,
  type TemplateBuildInput,
  type TemplateFiles,
} from '../src/render';
import { TYPE_SANDBOX_TEMPLATE } from './constants';
import { templateIdFrom } from './template-id';

export interface SandboxTemplateArgs {
  config: StackConfig;
  /** The sandbox host: its address, and its instance ID (a new instance has no template yet). */
  host: pulumi.Input<string>;
  instanceId: pulumi.Input<string>;
  /** The proxy's ingress address and password (a secret). */
  target: pulumi.Input<ClientTarget>;
  sshUser: string;
  /** The SSH private key (a secret). */
  privateKey: pulumi.Input<string>;
  /** Resources the SSH session waits for (the address association). */
  dependsOn?: pulumi.Input<pulumi.Resource>[];
}

export interface TemplateTriggers {
  instanceId: string;
  /** Digest of the client files: changes with the ingress address or the password, not with the egress address. */
  clientFiles: string;
  /** Digest of the template definition: the template settings, the stack file the build reads, the build script. */
  definition: string;
}

const digest = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex');

/** What makes the template rebuild; everything else (an egress rotation above all) leaves it as it is. */
export function templateTriggers(config: StackConfig, instanceId: string, files: TemplateFiles): TemplateTriggers {
  const sorted = Object.fromEntries(
    Object.keys(files)
      .sort()
      .map((k) => [k, files[k]]),
  );
  return {
    instanceId,
    clientFiles: digest(sorted),
    definition: digest({ template: config.template, stack: renderStackFile(config), script: renderBuildTemplateScript(config) }),
  };
}

/**
 * The proxy template, built on the sandbox host through its platform API by `sandbox-kit template build` (the script
 * the host's cloud-init installed waits for the API, then runs it). Runs over SSH; the password travels on stdin,
 * never in a command line; the build's output lands in the Pulumi log. Rebuilt (replaced) when a trigger changes.
 */
export class SandboxTemplate extends pulumi.ComponentResource {
  readonly templateId: pulumi.Output<string>;
  readonly alias: string;

  constructor(name: string, args: SandboxTemplateArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_SANDBOX_TEMPLATE, name, {}, opts);
    const { config } = args;
    const triggers = pulumi.all([args.instanceId, args.target]).apply(([instanceId, target]) => {
      const t = templateTriggers(config, instanceId, renderTemplateFiles(config, target));
      return [t.instanceId, t.clientFiles, t.definition];
    });
    const input = pulumi.output(args.target).apply((target): TemplateBuildInput => ({ ...target, stackFile: renderStackFile(config) }));
    const build = new command.remote.Command(
      `${name}-build`,
      {
        connection: { host: args.host, user: args.sshUser, privateKey: args.privateKey },
        create: `sudo -n ${SANDBOX_HOST_PATHS.buildTemplate}`,
        stdin: pulumi.secret(input.apply((value) => JSON.stringify(value))),
        triggers,
      },
      { parent: this, dependsOn: args.dependsOn, replaceOnChanges: ['triggers'], deleteBeforeReplace: true },
    );
    // The build's own progress lines, into the Pulumi log of this resource (they never carry the files' content).
    build.stdout.apply((out) => {
      if (out) pulumi.log.info(out.trimEnd(), build);
    });
    this.alias = config.template.alias;
    this.templateId = build.stdout.apply((out) => templateIdFrom(out ?? '', config.template.alias));
    this.registerOutputs({ templateId: this.templateId });
  }
}
