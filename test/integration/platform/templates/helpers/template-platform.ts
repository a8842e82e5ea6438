/**
 * One template platform for a test file: a private Redis, the template service over the runtime's step executor
 * (crun or runc, whichever suits this host), its routes on the platform's API server, a data directory; `stop()`
 * removes all of it.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { createTemplateService, templateRoutes, type TemplateService } from '../../../../../src/platform/templates';
import { ApiKeys } from '../../../../../src/platform/teams/api-keys';
import { startApiServer } from '../../../../../src/platform/http/server';
import { cleanupLeftovers, createStepExecutor, MmdebstrapImages } from '../../../../../src/runtime';
import type { BaseImages, StepExecutor, StepRun } from '../../../../../src/runtime/types';
import { startRedis } from '../../../../helpers/redis';
import type { BuildLimits } from '../../../../../src/config';
import { testRuntime } from '../../../../helpers/test-runtime';

export const API_KEY = 'sk-test-templates';

export interface TemplatePlatform {
  url: string;
  service: TemplateService;
  executor: StepExecutor;
  bases: BaseImages;
  dataDir: string;
  redis: Redis;
  stop(): Promise<void>;
}

export async function startTemplatePlatform(
  opts: { readyTimeoutMs?: number; stepTimeoutMs?: number; limits?: Partial<BuildLimits> } = {},
): Promise<TemplatePlatform> {
  const redisServer = await startRedis();
  const redis = new Redis(redisServer.url, { lazyConnect: false, maxRetriesPerRequest: 2 });
  const dataDir = await mkdtemp(join(tmpdir(), 'sk-templates-'));
  // A runtime instance of this test file's own: its step containers' state, scratch and cgroups carry the name.
  const runtime = {
    instance: `t${randomBytes(4).toString('hex')}`,
    stateRoot: join(dataDir, 'runtime-state'),
    dataRoot: join(dataDir, 'runtime-data'),
  };
  const executor = createStepExecutor({
    ...runtime,
    runtime: testRuntime(),
    ...(opts.limits?.stepDiskMB !== undefined ? { diskMB: opts.limits.stepDiskMB } : {}),
  });
  const bases = new MmdebstrapImages();
  const service = await createTemplateService({
    redis,
    executor,
    baseImages: bases,
    dataDir,
    readyTimeoutMs: opts.readyTimeoutMs,
    stepTimeoutMs: opts.stepTimeoutMs,
    limits: opts.limits,
  });
  const server = await startApiServer({ routes: templateRoutes(service), apiKeys: ApiKeys.fromKeys([API_KEY]) });
  return {
    url: server.url,
    service,
    executor,
    bases,
    dataDir,
    redis,
    async stop() {
      await service.close();
      await server.close();
      redis.disconnect();
      await cleanupLeftovers(runtime);
      await redisServer.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Runs a command over a template's layers (the sandbox stand-in until the platform creates sandboxes). */
export async function runIn(
  p: TemplatePlatform,
  t: { layers: string[]; user: string; workdir?: string; envs: Record<string, string> },
  command: string,
): Promise<{ code: number; out: string }> {
  const layerDir = await mkdtemp(join(p.dataDir, 'probe-'));
  await chmod(layerDir, 0o755);
  const lines: string[] = [];
  try {
    const step: StepRun = {
      layers: t.layers,
      layerDir,
      argv: ['/bin/bash', '-c', command],
      user: t.user,
      workdir: t.workdir ?? '/',
      env: t.envs,
      network: 'none',
      memoryMB: 512,
      cpuCount: 1,
      timeoutMs: 30_000,
      onLine: (_s, line) => lines.push(line),
    };
    const code = await p.executor.run(step);
    return { code, out: lines.join('\n') };
  } finally {
    await rm(layerDir, { recursive: true, force: true });
  }
}
