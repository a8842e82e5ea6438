import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CommittedConfigs } from '../../../src/runtime/committed-configs';

const config = (memoryMB: number, cpus: number) =>
  JSON.stringify({ linux: { resources: { memory: { limit: memoryMB * 1024 * 1024 }, cpu: { quota: cpus * 100_000, period: 100_000 } } } });

describe('CommittedConfigs', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-committed-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const file = (name: string) => path.join(dir, name);

  test('sums the configs; a missing, partial or non-file entry counts nothing', () => {
    fs.writeFileSync(file('a'), config(512, 1));
    fs.writeFileSync(file('b'), config(256, 2));
    fs.writeFileSync(file('partial'), config(1024, 4).slice(0, 20));
    fs.mkdirSync(file('dir'));
    fs.writeFileSync(file('x.console.log'), 'not a directory');
    const configs = new CommittedConfigs();
    const files = ['a', 'b', 'partial', 'dir', 'missing'].map(file);
    expect(configs.sum([...files, path.join(file('x.console.log'), 'config.json')])).toEqual({ memoryMB: 768, cpuCount: 3 });
  });

  test('a config is parsed once, read again when it is rewritten, and forgotten when it is gone', () => {
    fs.writeFileSync(file('a'), config(512, 1));
    fs.writeFileSync(file('b'), config(256, 2));
    const configs = new CommittedConfigs();
    const parse = jest.spyOn(JSON, 'parse');
    try {
      expect(configs.sum([file('a'), file('b')])).toEqual({ memoryMB: 768, cpuCount: 3 });
      expect(parse).toHaveBeenCalledTimes(2);
      expect(configs.sum([file('a'), file('b')])).toEqual({ memoryMB: 768, cpuCount: 3 });
      expect(parse).toHaveBeenCalledTimes(2);
      // Rewritten in place with the same size (a restart renders it again): its new limits count.
      fs.writeFileSync(file('b'), config(128, 2));
      const later = new Date(Date.now() + 5_000);
      fs.utimesSync(file('b'), later, later);
      expect(configs.sum([file('a'), file('b')])).toEqual({ memoryMB: 640, cpuCount: 3 });
      expect(parse).toHaveBeenCalledTimes(3);
      // Replaced by another file (a new inode) with the same size and times: read again.
      const st = fs.statSync(file('a'));
      fs.writeFileSync(file('a.new'), config(384, 1));
      fs.utimesSync(file('a.new'), st.atime, st.mtime);
      fs.renameSync(file('a.new'), file('a'));
      expect(configs.sum([file('a'), file('b')])).toEqual({ memoryMB: 512, cpuCount: 3 });
      fs.rmSync(file('b'));
      expect(configs.sum([file('a'), file('b')])).toEqual({ memoryMB: 384, cpuCount: 1 });
    } finally {
      parse.mockRestore();
    }
  });

  test('a config this process wrote counts as written, unread, until it is forgotten or left out of a sum', () => {
    // The file says otherwise (nothing but this process writes there): what was written is what counts.
    fs.writeFileSync(file('a'), config(1024, 4));
    fs.writeFileSync(file('b'), config(256, 2));
    const configs = new CommittedConfigs();
    configs.wrote(file('a'), JSON.parse(config(512, 1)));
    expect(configs.sum([file('a'), file('b')])).toEqual({ memoryMB: 768, cpuCount: 3 });
    // Forgotten (the sandbox stopped or is being removed): it counts as what the file there says, if anything.
    configs.forget(file('a'));
    expect(configs.sum([file('a'), file('b')])).toEqual({ memoryMB: 1280, cpuCount: 6 });
    fs.rmSync(file('a'));
    expect(configs.sum([file('a'), file('b')])).toEqual({ memoryMB: 256, cpuCount: 2 });
    // Written again, then left out of a sum (its directory went without a forget): read from the file next time.
    configs.wrote(file('a'), JSON.parse(config(512, 1)));
    expect(configs.sum([file('b')])).toEqual({ memoryMB: 256, cpuCount: 2 });
    fs.writeFileSync(file('a'), config(128, 1));
    expect(configs.sum([file('a'), file('b')])).toEqual({ memoryMB: 384, cpuCount: 3 });
  });
});
