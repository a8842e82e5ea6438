import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { renderOciConfig, type ContainerConfigInput } from '../../../src/runtime/oci-config';
import { renderSeccomp } from '../../../src/runtime/seccomp';
import { CompiledSeccomp, SECCOMP_BPF_ANNOTATION } from '../../../src/runtime/seccomp-bpf';

const input: ContainerConfigInput = {
  rootfs: '/r',
  args: ['/bin/true'],
  env: {},
  cwd: '/',
  uid: 0,
  gid: 0,
  hostname: 'h',
  memoryBytes: 64 * 1024 * 1024,
  cpuCount: 1,
  pidsLimit: 64,
  cgroupsPath: '/x/h',
  binds: [],
  nofile: 1024,
};

describe('the seccomp program crun compiled, kept for the next creates (seccomp-bpf.ts)', () => {
  let stateDir: string;
  beforeEach(() => (stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-bpf-'))));
  afterEach(() => fs.rmSync(stateDir, { recursive: true, force: true }));

  function written(id: string, bytes: Buffer): void {
    fs.mkdirSync(path.join(stateDir, id));
    fs.writeFileSync(path.join(stateDir, id, 'seccomp.bpf'), bytes);
  }

  test('kept per profile from the first container, base64; another profile is not served by it', () => {
    const c = new CompiledSeccomp();
    const profile = renderSeccomp('x64');
    expect(c.of(profile)).toBeUndefined();
    const program = Buffer.from([...Array(16).keys()]);
    written('a', program);
    c.keep(profile, stateDir, 'a');
    expect(c.of(profile)).toBe(program.toString('base64'));
    expect(c.of(renderSeccomp('arm64'))).toBeUndefined();
    // The first one kept stays.
    written('b', Buffer.alloc(8, 1));
    c.keep(profile, stateDir, 'b');
    expect(c.of(profile)).toBe(program.toString('base64'));
  });

  test('a missing, empty or torn program is not kept (crun compiles the profile again)', () => {
    const c = new CompiledSeccomp();
    const profile = renderSeccomp('x64');
    c.keep(profile, stateDir, 'missing');
    written('empty', Buffer.alloc(0));
    c.keep(profile, stateDir, 'empty');
    written('torn', Buffer.alloc(13));
    c.keep(profile, stateDir, 'torn');
    expect(c.of(profile)).toBeUndefined();
  });

  test('the annotation is set only with the profile (not for the unhardened benchmark peer)', () => {
    expect(renderOciConfig({ ...input, seccompBpf: 'AAAA' }).annotations).toEqual({ [SECCOMP_BPF_ANNOTATION]: 'AAAA' });
    expect(renderOciConfig(input).annotations).toBeUndefined();
    expect(renderOciConfig({ ...input, hardened: false, seccompBpf: 'AAAA' }).annotations).toBeUndefined();
  });
});
