import { sameBuild } from '../../../../src/platform/sandboxes/warm-pool';
import type { TemplateForSandbox } from '../../../../src/platform/sandboxes/template-resolver';

const build: TemplateForSandbox = {
  templateID: 't1',
  alias: 'web',
  buildID: 'b1',
  layers: ['/layers/a', '/layers/base'],
  memoryMB: 512,
  cpuCount: 1,
  envs: { A: '1' },
  user: 'user',
};

describe('sameBuild: which pooled sandboxes a create may take', () => {
  it('takes one of the same template, build, layers, memory, CPUs and disk', () => {
    expect(sameBuild(build, { ...build, layers: [...build.layers] })).toBe(true);
  });

  it('never one of another build, template, layer stack or size', () => {
    for (const other of [
      { ...build, buildID: 'b2' },
      { ...build, templateID: 't2' },
      { ...build, layers: ['/layers/mcp', ...build.layers] },
      { ...build, layers: [build.layers[1] as string, build.layers[0] as string] },
      { ...build, memoryMB: 1024 },
      { ...build, cpuCount: 2 },
      { ...build, diskSizeMB: 2048 },
    ])
      expect(sameBuild(build, other)).toBe(false);
  });
});
