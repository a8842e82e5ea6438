/** A platform that stopped during a build: at the next start the build is failed and its template free to build. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { createTemplateService } from '../../../../src/platform/templates';
import { MmdebstrapImages } from '../../../../src/runtime';
import type { StepExecutor } from '../../../../src/runtime/types';
import { startRedis, type ThrowawayRedis } from '../../../helpers/redis';
import { operatorCaller } from '../../../../src/platform/teams/model';

let redisServer: ThrowawayRedis;
let redis: Redis;
let dataDir: string;

beforeAll(async () => {
  redisServer = await startRedis();
  redis = new Redis(redisServer.url);
  dataDir = await mkdtemp(join(tmpdir(), 'sk-templates-'));
});

afterAll(async () => {
  redis?.disconnect();
  await redisServer?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

test('a build left running by a stopped platform is failed at the next start, and the template can build again', async () => {
  // The executor is never reached here: recovery and the refusal of a second build happen before any step runs.
  const executor: StepExecutor = { run: () => Promise.reject(new Error('no step runs in this test')) };
  const options = { redis, executor, baseImages: new MmdebstrapImages(), dataDir };
  const before = await createTemplateService(options);
  const { templateID, buildID } = await before.requestBuild({ name: 'interrupted' }, operatorCaller());
  // What a platform killed mid-build leaves: the build marked building and the template's running claim.
  expect(await before.store.claimRunning(templateID, buildID)).toBe(true);
  const build = (await before.store.getBuild(buildID))!;
  await before.store.putBuild({ ...build, status: 'building' });

  const after = await createTemplateService(options);
  const status = await after.buildStatus(templateID, buildID, 0, 100, operatorCaller());
  expect(status).toMatchObject({ status: 'error', reason: { message: 'the platform stopped while this build ran; build again' } });
  expect(await after.store.runningBuild(templateID)).toBeUndefined();
  expect(await after.resolve('interrupted')).toBeUndefined();
});
