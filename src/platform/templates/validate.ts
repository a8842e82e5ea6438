/**
 * The last phase of a build: start the new template once, run its start command and poll its ready command until it
 * exits 0, within a timeout. A template whose start command never becomes ready is not registered.
 */
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { TemplateForSandbox } from '../sandboxes/template-resolver';
import type { StepExecutor } from '../../runtime/types';
import { shellQuote } from '../../util/shell-quote';

export interface ValidationIo {
  timeoutMs: number;
  onLine(line: string): void;
}

export type ValidationResult = { ok: true } | { ok: false; message: string };

export interface TemplateValidator {
  validate(template: TemplateForSandbox, io: ValidationIo): Promise<ValidationResult>;
}

/** Exit code of the validation script when the ready command never succeeded. */
export const NOT_READY_EXIT = 124;

/** The script: the start command in the background (its output in the log), the ready command polled every 200 ms. */
export function renderValidationScript(startCmd: string | undefined, readyCmd: string | undefined, timeoutMs: number): string {
  const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
  const start = startCmd ? `bash -c ${shellQuote(startCmd)} 2>&1 &\n` : '';
  const ready = readyCmd ?? 'true';
  return `${start}deadline=$((SECONDS + ${seconds}))
until bash -c ${shellQuote(ready)} >/dev/null 2>&1; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "ready command did not succeed within ${seconds}s: ${ready.replace(/[\\$`"]/g, '\\$&')}" >&2
    exit ${NOT_READY_EXIT}
  fi
  sleep 0.2
done
echo "ready command succeeded: ${ready.replace(/[\\$`"]/g, '\\$&')}"
`;
}

/**
 * Validates in a one-shot container over the template's layers, in a network namespace of its own (a start command
 * may listen on any port or change firewall rules: never on the host's network). Its writes go to a throwaway layer.
 * Needs no agent and no sandbox network: the template service on its own (tests, a build host) uses it.
 */
export function stepValidator(executor: StepExecutor, scratchDir: string): TemplateValidator {
  return {
    async validate(t, io) {
      await mkdir(scratchDir, { recursive: true });
      const layerDir = await mkdtemp(join(scratchDir, 'validate-'));
      try {
        // The upper dir's mode becomes the mode of the sandbox's `/`: everyone must be able to enter it.
        await chmod(layerDir, 0o755);
        const code = await executor.run({
          layers: t.layers,
          layerDir,
          argv: ['/bin/bash', '-c', renderValidationScript(t.startCmd, t.readyCmd, io.timeoutMs)],
          user: t.user,
          workdir: t.workdir ?? '/',
          env: t.envs,
          network: 'none',
          memoryMB: t.memoryMB,
          cpuCount: t.cpuCount,
          timeoutMs: io.timeoutMs + 15_000,
          onLine: (_stream, line) => io.onLine(line),
        });
        if (code === 0) return { ok: true };
        if (code === NOT_READY_EXIT)
          return { ok: false, message: `the ready command never succeeded within ${Math.ceil(io.timeoutMs / 1000)} s: ${t.readyCmd}` };
        return { ok: false, message: `starting the template failed (exit ${code})` };
      } finally {
        await rm(layerDir, { recursive: true, force: true });
      }
    },
  };
}

/** What the sandbox validator needs of the platform's sandboxes (SandboxService has it). */
export interface SandboxStarter {
  create(request: {
    templateID: string;
    timeout: number;
    metadata: Record<string, string>;
    envVars: Record<string, string>;
    autoPause: boolean;
  }): Promise<{ sandboxID: string }>;
  kill(sandboxID: string): Promise<void>;
}

/** Metadata key marking the sandbox a build starts to check its template. */
export const BUILD_CHECK_METADATA = 'sandbox-kit:template-build';

/**
 * Validates by starting a real sandbox from the new build (the template service resolves the build's ID while it is
 * being checked): the platform runs the start command through the sandbox's agent and waits for the ready command,
 * exactly as for any sandbox; then the sandbox is killed. `sandboxes` is asked at validation time, because the
 * platform makes its sandbox service after the template service.
 */
export function sandboxValidator(sandboxes: () => SandboxStarter | undefined): TemplateValidator {
  return {
    async validate(t, io) {
      const starter = sandboxes();
      if (!starter) return { ok: false, message: 'the platform cannot start sandboxes yet; build again once it is up' };
      let sandboxID: string | undefined;
      try {
        ({ sandboxID } = await starter.create({
          templateID: t.buildID,
          timeout: Math.ceil(io.timeoutMs / 1000) + 60,
          metadata: { [BUILD_CHECK_METADATA]: t.buildID },
          envVars: {},
          autoPause: false,
        }));
        io.onLine(`sandbox ${sandboxID} started from the new build: the start command ran and the ready command succeeded`);
        return { ok: true };
      } catch (err) {
        return { ok: false, message: `a sandbox from the new build did not become ready: ${(err as Error).message}` };
      } finally {
        if (sandboxID) await starter.kill(sandboxID).catch(() => undefined);
      }
    },
  };
}
