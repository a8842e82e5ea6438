import { loadStackConfig, parseStackConfig, limitFlags, LIMIT_FLAGS } from '../../../src/config';
import { DEFAULT_ADMISSION } from '../../../src/runtime/admission';
import { DEFAULT_CONSOLE_LOG_BYTES } from '../../../src/runtime/console-log';
import { DEFAULT_NOFILE, DEFAULT_PIDS_LIMIT } from '../../../src/runtime/oci-runtime';
import { DEFAULT_DISK_MB } from '../../../src/runtime/sandbox-disk';
import { limitsFromFlags } from '../../../src/cli/commands/platform';
import { DEFAULT_PAUSED_POLICY } from '../../../src/platform/sandboxes/paused-policy';
import { DEFAULT_VOLUME_MAX_BYTES } from '../../../src/platform/volumes/service';

function issues(raw: Record<string, unknown>) {
  const result = parseStackConfig(raw);
  return result.ok ? [] : result.issues;
}

describe('limits keys', () => {
  it("default to the runtime's own values, so a stack without them runs as a bare runtime does", () => {
    const { limits } = loadStackConfig({});
    expect(limits.pidsLimit).toBe(DEFAULT_PIDS_LIMIT);
    expect(limits.nofile).toBe(DEFAULT_NOFILE);
    expect(limits.consoleLogBytes).toBe(DEFAULT_CONSOLE_LOG_BYTES);
    expect(limits.memoryOvercommit).toBe(DEFAULT_ADMISSION.memoryOvercommit);
    expect(limits.cpuOvercommit).toBe(DEFAULT_ADMISSION.cpuOvercommit);
    expect(limits.diskOvercommit).toBe(DEFAULT_ADMISSION.diskOvercommit);
    expect(limits.diskDefaultMB).toBe(DEFAULT_DISK_MB);
    expect(limits.diskMaxMB).toBeGreaterThanOrEqual(limits.diskDefaultMB);
    expect(limits.pausedToDiskAfterMinutes * 60_000).toBe(DEFAULT_PAUSED_POLICY.toDiskAfterMs);
    expect(limits.pausedRetentionDays * 86_400_000).toBe(DEFAULT_PAUSED_POLICY.retentionMs);
    expect(limits.volumeMaxMB * 1024 * 1024).toBe(DEFAULT_VOLUME_MAX_BYTES);
  });

  it('accept the strings `pulumi config set` stores, decimals for the overcommits', () => {
    const { limits } = loadStackConfig({ limits: { pidsLimit: '512', memoryOvercommit: '1.5', diskDefaultMB: '256', diskMaxMB: 2048 } });
    expect(limits).toMatchObject({ pidsLimit: 512, memoryOvercommit: 1.5, diskDefaultMB: 256, diskMaxMB: 2048 });
  });

  it('report every bad value at once, each naming its key with the sentence of what it accepts', () => {
    expect(
      issues({ limits: { pidsLimit: 3, nofile: 'many', consoleLogBytes: 1.5, cpuOvercommit: 0, diskMaxMB: 10, templateMaxCpuCount: 65 } }),
    ).toEqual([
      { key: 'sandbox-kit:limits.pidsLimit', given: '3', expected: 'an integer from 16 to 4194304' },
      { key: 'sandbox-kit:limits.nofile', given: '"many"', expected: 'an integer from 64 to 1048576' },
      { key: 'sandbox-kit:limits.consoleLogBytes', given: '1.5', expected: 'a size in bytes, an integer from 4096 to 1073741824' },
      { key: 'sandbox-kit:limits.cpuOvercommit', given: '0', expected: 'a number from 0.1 to 1000' },
      { key: 'sandbox-kit:limits.diskMaxMB', given: '10', expected: 'a size in MB, an integer from 64 to 1048576' },
      { key: 'sandbox-kit:limits.templateMaxCpuCount', given: '65', expected: 'an integer from 1 to 64' },
    ]);
  });

  it('refuse a default disk larger than the maximum, and an unknown key', () => {
    expect(issues({ limits: { diskDefaultMB: 4096, diskMaxMB: 2048 } })).toEqual([
      {
        key: 'sandbox-kit:limits.diskDefaultMB',
        given: '4096',
        expected: 'at most limits.diskMaxMB (2048): the default disk must be one a template may ask for',
      },
    ]);
    expect(issues({ limits: { diskMB: 1 } }).map((i) => i.key)).toEqual(['sandbox-kit:limits.diskMB']);
  });

  it("reach the platform as the flags the sandbox host's unit passes, read back to the same values", () => {
    const { limits } = loadStackConfig({
      limits: {
        pidsLimit: 999,
        memoryOvercommit: 1.25,
        diskMaxMB: 4096,
        templateMaxMemoryMB: 2048,
        pausedRetentionDays: 7,
        volumeMaxMB: 128,
      },
    });
    const argv = limitFlags(limits);
    const flags: Record<string, string> = {};
    for (let i = 0; i < argv.length; i += 2) flags[argv[i]!.slice(2)] = argv[i + 1]!;
    expect(Object.keys(flags).sort()).toEqual(Object.values(LIMIT_FLAGS).sort());
    expect(limitsFromFlags(flags)).toEqual(limits);
  });

  it('are checked as flags of `platform` with the same sentences, naming the flag', () => {
    expect(() => limitsFromFlags({ 'pids-limit': 'x' })).toThrow('--pids-limit: got "x"; expected an integer from 16 to 4194304');
    expect(() => limitsFromFlags({ 'disk-default-mb': '4096', 'disk-max-mb': '2048' })).toThrow(
      '--disk-default-mb: got "4096"; expected at most limits.diskMaxMB (2048)',
    );
    expect(limitsFromFlags({})).toEqual(loadStackConfig({}).limits);
  });
});
