/**
 * What a template may ask for on this platform: memory, CPUs and disk, each up to the stack's maximum
 * (`limits.templateMaxMemoryMB`, `limits.templateMaxCpuCount`, `limits.diskMaxMB`). A build asking for more is
 * refused before anything is made, each problem naming the setting. Pure.
 */

export interface TemplateLimits {
  /** A sandbox's disk when the template asks for less (or nothing). */
  defaultDiskMB: number;
  maxDiskMB: number;
  maxMemoryMB: number;
  maxCpuCount: number;
}

/** The wire's own bounds: with no stack settings, nothing beyond them is refused here. */
export const OPEN_TEMPLATE_LIMITS: TemplateLimits = { defaultDiskMB: 1024, maxDiskMB: 1024 * 1024, maxMemoryMB: 65536, maxCpuCount: 64 };

/**
 * The disk a template's sandboxes get: the SDK's `minFreeDiskMb` (the free space the template wants after its
 * steps), never less than the default.
 */
export function templateDiskMB(minFreeDiskMb: number | undefined, limits: TemplateLimits): number {
  return Math.max(limits.defaultDiskMB, Math.ceil(minFreeDiskMb ?? 0));
}

export interface TemplateRequest {
  memoryMB?: number;
  cpuCount?: number;
  minFreeDiskMb?: number;
}

/** One sentence per resource asked beyond its maximum; empty when the request fits. */
export function templateLimitProblems(request: TemplateRequest, limits: TemplateLimits): string[] {
  const problems: string[] = [];
  if (request.memoryMB !== undefined && request.memoryMB > limits.maxMemoryMB)
    problems.push(
      `memoryMB: ${request.memoryMB} is more than this platform's maximum of ${limits.maxMemoryMB} MB per template (setting limits.templateMaxMemoryMB)`,
    );
  if (request.cpuCount !== undefined && request.cpuCount > limits.maxCpuCount)
    problems.push(
      `cpuCount: ${request.cpuCount} is more than this platform's maximum of ${limits.maxCpuCount} CPUs per template (setting limits.templateMaxCpuCount)`,
    );
  const disk = templateDiskMB(request.minFreeDiskMb, limits);
  if (disk > limits.maxDiskMB)
    problems.push(
      `minFreeDiskMb: ${request.minFreeDiskMb} is more than this platform's maximum disk of ${limits.maxDiskMB} MB per sandbox (setting limits.diskMaxMB)`,
    );
  return problems;
}
