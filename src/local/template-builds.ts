/**
 * The templates the SDKs ask for by default, built by the local system's service process in the background once
 * `up` has made the core system usable: `mcp-gateway` (`Sandbox.create({ mcp })`) and `code-interpreter-v1`
 * (`@e2b/code-interpreter`). One at a time, through the platform's own API with the E2B SDK, so a later `up` finds
 * every step in the layer cache. Progress goes to a JSON file `status` reads; a create that names one of them while
 * it builds waits for it (within the SDK's request timeout) or is told plainly why it cannot have it yet.
 */
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import type { BuildInfo, BuildOptions } from 'e2b';
import { buildCodeInterpreterTemplate } from '../../templates/code-interpreter/template';
import { buildMcpGatewayTemplate } from '../../templates/mcp-gateway';
import { CODE_INTERPRETER_TEMPLATE } from '../contract/code-interpreter';
import { MCP_TEMPLATE } from '../contract/mcp';
import { ApiError } from '../platform/http/types';
import type { TemplateResolver } from '../platform/sandboxes/template-resolver';

type Connection = Pick<BuildOptions, 'apiKey' | 'apiUrl' | 'onBuildLogs'>;
type Builder = (connection: Connection, extraCaCertsFile: string | undefined) => Promise<BuildInfo>;

/** What the local system builds, in this order. */
export const LOCAL_TEMPLATES: ReadonlyArray<{ name: string; build: Builder }> = [
  { name: MCP_TEMPLATE, build: (c, extraCaCertsFile) => buildMcpGatewayTemplate(c, { extraCaCertsFile }) },
  { name: CODE_INTERPRETER_TEMPLATE, build: (c, extraCaCertsFile) => buildCodeInterpreterTemplate(c, { extraCaCertsFile }) },
];

/**
 * The host's trust store (Debian's bundle, with any CA the machine added, such as a TLS-inspecting proxy's): the
 * local system's templates trust it unless `up --no-host-ca-certs`. Undefined when the host has none.
 */
export function hostCaStore(path = '/etc/ssl/certs/ca-certificates.crt'): string | undefined {
  return existsSync(path) ? path : undefined;
}

export interface TemplateBuildState {
  name: string;
  state: 'waiting' | 'building' | 'ready' | 'failed';
  startedAt?: string;
  finishedAt?: string;
  /** The build's last log line while it runs; the reason once it failed. */
  message?: string;
  templateID?: string;
  /** The steps of the build that make a layer (RUN, COPY), and how many of them came from the layer cache. */
  layerSteps?: number;
  cachedSteps?: number;
}

/**
 * How long a create waits for a template still building before it is told to come back: under the E2B SDK's
 * default request timeout (60 s), so the caller reads the platform's message rather than its own timeout.
 */
export const CREATE_WAIT_MS = 45_000;

export interface TemplateBuildsOptions {
  /** Where the states are written for `status`. */
  statusFile: string;
  /** Certificates the templates trust besides Debian's (the host's store behind a TLS-inspecting proxy). */
  extraCaCertsFile?: string;
  log(line: string): void;
  templates?: ReadonlyArray<{ name: string; build: Builder }>;
}

export class TemplateBuilds {
  private readonly states: TemplateBuildState[];
  private readonly templates: ReadonlyArray<{ name: string; build: Builder }>;
  private readonly changed = new Set<() => void>();

  constructor(private readonly o: TemplateBuildsOptions) {
    this.templates = o.templates ?? LOCAL_TEMPLATES;
    this.states = this.templates.map((t) => ({ name: t.name, state: 'waiting' }));
    this.write();
  }

  private running: Promise<void> | undefined;

  /**
   * Builds every template not ready yet, in turn, through the platform's API; a failed one is recorded and the next
   * one still built. A call while they build returns the running round.
   */
  buildAll(api: { apiUrl: string; apiKey: string }): Promise<void> {
    this.running ??= this.round(api).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async round(api: { apiUrl: string; apiKey: string }): Promise<void> {
    for (const [i, template] of this.templates.entries()) {
      const state = this.states[i]!;
      if (state.state === 'ready') continue;
      Object.assign(state, { state: 'building', startedAt: new Date().toISOString(), message: 'starting', layerSteps: 0, cachedSteps: 0 });
      this.update();
      this.o.log(`template ${template.name}: building`);
      // A RUN or COPY step's header, then either CACHED or its output (src/platform/templates/build-runner.ts); the
      // base's own provisioning layer logs CACHED too, before any header, and is not one of the template's steps.
      let inStep = false;
      try {
        const info = await template.build(
          {
            ...api,
            onBuildLogs: (entry) => {
              const line = String(entry.message ?? entry).trim();
              if (/^\[\d+\/\d+\] (RUN|COPY) /.test(line)) {
                state.layerSteps = (state.layerSteps ?? 0) + 1;
                inStep = true;
              } else {
                if (inStep && line.startsWith('CACHED ')) state.cachedSteps = (state.cachedSteps ?? 0) + 1;
                inStep = false;
              }
              state.message = line.slice(0, 300);
              this.write();
            },
          },
          this.o.extraCaCertsFile,
        );
        Object.assign(state, { state: 'ready', templateID: info.templateId, message: undefined });
        this.o.log(`template ${template.name}: ready (${info.templateId})`);
      } catch (err) {
        Object.assign(state, { state: 'failed', message: (err as Error).message.split('\n').slice(0, 5).join(' ') });
        this.o.log(`template ${template.name}: failed: ${state.message}`);
      }
      state.finishedAt = new Date().toISOString();
      this.update();
    }
  }

  list(): TemplateBuildState[] {
    return this.states.map((s) => ({ ...s }));
  }

  /**
   * The platform's last resolver: a template that nothing else resolves but is one of these is waited for while it
   * builds (at most waitMs), then resolved by `inner`; a failed or still unfinished build is a clear error.
   */
  resolver(inner: TemplateResolver, waitMs = CREATE_WAIT_MS): TemplateResolver {
    return {
      resolve: async (idOrAlias, teamID) => {
        const state = this.states.find((s) => s.name === idOrAlias);
        if (state === undefined) return undefined;
        const settled = await this.settled(state, waitMs);
        if (settled.state === 'ready') return inner.resolve(idOrAlias, teamID);
        throw new ApiError(503, notReadyMessage(settled));
      },
      names: async () => [],
    };
  }

  private settled(state: TemplateBuildState, waitMs: number): Promise<TemplateBuildState> {
    const done = () => state.state === 'ready' || state.state === 'failed';
    if (done()) return Promise.resolve(state);
    return new Promise((resolve) => {
      const finish = () => {
        if (!done()) return;
        clearTimeout(timer);
        this.changed.delete(finish);
        resolve(state);
      };
      const timer = setTimeout(() => {
        this.changed.delete(finish);
        resolve(state);
      }, waitMs);
      this.changed.add(finish);
    });
  }

  private update(): void {
    this.write();
    for (const listener of [...this.changed]) listener();
  }

  private write(): void {
    // Whole or not at all: `status` reads it while builds write it.
    writeFileSync(`${this.o.statusFile}.tmp`, `${JSON.stringify(this.states, null, 2)}\n`, { mode: 0o644 });
    renameSync(`${this.o.statusFile}.tmp`, this.o.statusFile);
  }
}

/** Why a create cannot have the template yet, and what to do. */
export function notReadyMessage(state: TemplateBuildState): string {
  if (state.state === 'failed')
    return `template "${state.name}" could not be built by sandbox-kit up: ${state.message ?? 'no reason recorded'}. 'sandbox-kit status' shows it; the next 'sandbox-kit up' builds it again`;
  const since = state.startedAt ? ` (for ${Math.round((Date.now() - Date.parse(state.startedAt)) / 1000)} s)` : '';
  const what = state.state === 'waiting' ? 'is waiting to be built by sandbox-kit up' : `is still being built by sandbox-kit up${since}`;
  return `template "${state.name}" ${what}; 'sandbox-kit status' shows its progress. Try again once it says ready`;
}
