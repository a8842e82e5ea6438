import { keptBuildIDs, liveReferences } from '../../../../src/platform/storage/references';
import type { BuildRecord, TemplateRecord } from '../../../../src/platform/templates/store';

const template = (templateID: string, readyBuildID?: string): TemplateRecord => ({
  templateID,
  teamID: 'team1',
  names: [templateID],
  cpuCount: 1,
  memoryMB: 512,
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
  buildCount: 1,
  ...(readyBuildID ? { readyBuildID } : {}),
});

const build = (buildID: string, layers: string[], copies: string[] = []): BuildRecord => ({
  buildID,
  templateID: 't',
  teamID: 'team1',
  status: 'ready',
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
  cpuCount: 1,
  memoryMB: 512,
  tags: ['default'],
  layers,
  envs: {},
  user: 'user',
  steps: [
    { type: 'RUN', args: ['true'], force: false },
    ...copies.map((filesHash) => ({ type: 'COPY' as const, args: ['a', 'b'], force: false, filesHash })),
  ],
});

test('kept builds: every tag target and ready build of the templates that exist', () => {
  const tag = (buildID: string) => ({ buildID, createdAt: '2026-01-01T00:00:00Z' });
  const kept = keptBuildIDs([
    {
      template: template('a', 'b1'),
      tags: new Map([
        ['default', tag('b2')],
        ['v1', tag('b3')],
      ]),
    },
    { template: template('c'), tags: new Map() },
  ]);
  expect([...kept].sort()).toEqual(['b1', 'b2', 'b3']);
});

test("live references: kept builds' layers and their COPY uploads (per team), sandboxes' and snapshots' layers, resolved", () => {
  const live = liveReferences(
    [build('b1', ['/d/layers/x', '/d/layers/y/../z', '/cache/rootfs'], ['h1'])],
    [{ layers: ['/d/layers/s'] }, {}],
    [{ layerDir: '/d/snapshots/n', template: { layers: ['/d/snapshots/n', '/d/layers/old'] } }],
  );
  expect([...live.layers].sort()).toEqual([
    '/cache/rootfs',
    '/d/layers/old',
    '/d/layers/s',
    '/d/layers/x',
    '/d/layers/z',
    '/d/snapshots/n',
  ]);
  expect([...live.uploads]).toEqual(['team1:h1']);
});
