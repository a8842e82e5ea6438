import { templateDiskMB, templateLimitProblems, type TemplateLimits } from '../../../../src/platform/templates/limits';

const limits: TemplateLimits = { defaultDiskMB: 1024, maxDiskMB: 4096, maxMemoryMB: 2048, maxCpuCount: 4 };

describe('what a template may ask for', () => {
  it("gets the SDK's minFreeDiskMb as its disk, never less than the default", () => {
    expect(templateDiskMB(undefined, limits)).toBe(1024);
    expect(templateDiskMB(0, limits)).toBe(1024);
    expect(templateDiskMB(3000, limits)).toBe(3000);
    expect(templateDiskMB(4096, limits)).toBe(4096);
  });

  it('fits when every resource is within its maximum', () => {
    expect(templateLimitProblems({ memoryMB: 2048, cpuCount: 4, minFreeDiskMb: 4096 }, limits)).toEqual([]);
    expect(templateLimitProblems({}, limits)).toEqual([]);
  });

  it('names each resource beyond its maximum, the maximum and the setting that holds it', () => {
    const problems = templateLimitProblems({ memoryMB: 4096, cpuCount: 8, minFreeDiskMb: 5000 }, limits);
    expect(problems).toEqual([
      "memoryMB: 4096 is more than this platform's maximum of 2048 MB per template (setting limits.templateMaxMemoryMB)",
      "cpuCount: 8 is more than this platform's maximum of 4 CPUs per template (setting limits.templateMaxCpuCount)",
      "minFreeDiskMb: 5000 is more than this platform's maximum disk of 4096 MB per sandbox (setting limits.diskMaxMB)",
    ]);
  });
});
