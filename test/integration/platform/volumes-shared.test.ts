/**
 * Volumes on a fleet's shared file system (Amazon EFS there; a directory here that two hosts' volume services share,
 * with the fleet's shared Redis): plain directories, no disk per volume, so what sandboxes write is measured, not
 * stopped. Host A runs a sandbox that mounts the volume and writes into it (here: files written into the volume's
 * directory, which is what the sandbox's bind mount reaches); A's periodic measurement charges the team; then on
 * either host a new mount of the volume over its size is refused, and so are creates over the team's stored bytes,
 * until files are removed. Root (the volume's directory is given to the sandboxes' id range).
 */
import * as fs from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { ApiError } from '../../../src/platform/http/types';
import type { SandboxRecord } from '../../../src/platform/sandboxes/record';
import { QuotaLedger } from '../../../src/platform/teams/quotas';
import { TeamStore } from '../../../src/platform/teams/store';
import { VolumeService } from '../../../src/platform/volumes/service';
import { VolumeStore } from '../../../src/platform/volumes/store';
import { startRedis, type ThrowawayRedis } from '../../helpers/redis';

const MiB = 1024 * 1024;
const MAX_BYTES = 2 * MiB;
const QUOTA = 4 * MiB;

let server: ThrowawayRedis;
let redis: Redis;
let dir: string;
const services: VolumeService[] = [];
const member = (teamID: string) => ({ teamID, keyID: 'k', role: 'member' as const, quotas: {}, presentedKey: '' });

beforeAll(async () => {
  server = await startRedis();
  redis = new Redis(server.url);
  dir = await mkdtemp(join(tmpdir(), 'skv2-shared-'));
});

afterAll(async () => {
  for (const s of services) await s.stop();
  redis?.disconnect();
  await server?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** One host's volume service: its own ledger name and its own sandboxes, the shared store and directory. */
function host(sandboxes: () => SandboxRecord[], ledger: QuotaLedger): VolumeService {
  const s = new VolumeService({
    store: new VolumeStore(redis),
    sandboxes: async () => sandboxes(),
    dir,
    maxBytes: MAX_BYTES,
    disks: false,
    ledger,
  });
  services.push(s);
  return s;
}

async function refusal(work: Promise<unknown>): Promise<ApiError> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(err)}`);
  return err;
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test("writes from a sandbox on a shared file system are measured: the team is charged, and new mounts over the volume's size and creates over the team's quota are refused until files go", async () => {
  const team = await new TeamStore(redis).createTeam('efs', { templateBytes: QUOTA });
  const ledgerA = new QuotaLedger(redis, 'host-a');
  const stored = async () => (await ledgerA.usage(team.teamID)).templateBytes;
  let onA: SandboxRecord[] = [];
  const a = host(() => onA, ledgerA);
  const b = host(() => [], new QuotaLedger(redis, 'host-b'));

  const vol = await a.create('data', team.teamID);
  const [mount] = await b.resolve([{ name: 'data', path: '/data' }], team.teamID);
  expect(mount?.source).toBe(join(dir, vol.volumeID));
  onA = [{ sandboxID: 'sbx1', teamID: team.teamID, state: 'running', volumeMounts: [mount] } as unknown as SandboxRecord];

  // The sandbox on A writes past the volume's size: nothing stops it on a shared file system...
  fs.writeFileSync(join(dir, vol.volumeID, 'big.bin'), Buffer.alloc(3 * MiB, 1));
  // ...but A's periodic measurement charges the team with it.
  a.start(200);
  await until('the write measured', async () => (await stored()) >= 3 * MiB);

  // No host mounts the volume into a new sandbox while it is over its size.
  const mountRefused = await refusal(b.resolve([{ name: 'data', path: '/v' }], team.teamID));
  expect(mountRefused.code).toBe(507);
  expect(mountRefused.message).toMatch(
    /volume "data" holds \d+ bytes, over its limit of 2097152 .*remove files through the file API first/,
  );

  // A second volume within its size mounts; its sandbox takes the team over its stored bytes.
  const second = await b.create('more', team.teamID);
  const [secondMount] = await a.resolve([{ name: 'more', path: '/more' }], team.teamID);
  onA = [...onA, { sandboxID: 'sbx2', teamID: team.teamID, state: 'running', volumeMounts: [secondMount] } as unknown as SandboxRecord];
  fs.writeFileSync(join(dir, second.volumeID, 'm.bin'), Buffer.alloc(1.5 * MiB, 2));
  await until('the team over its quota', async () => (await stored()) > QUOTA);
  for (const work of [b.create('third', team.teamID), b.resolve([{ name: 'more', path: '/m' }], team.teamID)]) {
    const err = await refusal(work);
    expect(err.code).toBe(429);
    expect(err.message).toMatch(/quota exceeded: stored bytes \(templateBytes\) is 4194304 for this team/);
  }
  expect((await a.list(member(team.teamID))).map((v) => v.name).sort()).toEqual(['data', 'more']);

  // Files removed inside are measured too: the volume mounts and the team creates again.
  fs.rmSync(join(dir, vol.volumeID, 'big.bin'));
  await until('the removal measured', async () => (await stored()) < QUOTA);
  await a.stop();
  expect(await b.resolve([{ name: 'data', path: '/v' }], team.teamID)).toHaveLength(1);
  const third = await b.create('third', team.teamID);

  onA = [];
  for (const v of [vol, second, third]) expect(await a.destroy(v.volumeID, member(team.teamID))).toBe(true);
  expect(await stored()).toBe(0);
});
