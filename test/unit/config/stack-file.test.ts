import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readStackFile, stackFileIssues, stackFilePath } from '../../../src/config';

describe('stack file', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skt-stack-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function write(text: string): string {
    const path = join(dir, 'Pulumi.dev.yaml');
    writeFileSync(path, text);
    return path;
  }

  it('names Pulumi.<stack>.yaml in the project directory and refuses odd stack names', () => {
    expect(stackFilePath('/p', 'prod-eu')).toBe(join('/p', 'Pulumi.prod-eu.yaml'));
    expect(() => stackFilePath('/p', '../x')).toThrow(/invalid stack name/);
  });

  it('reads the sandbox-kit: keys, strips the namespace, ignores other namespaces and notes encrypted ones', () => {
    const file = readStackFile(
      write(`config:
  aws:region: eu-west-1
  sandbox-kit:proxy:
    port: 9000
  sandbox-kit:proxyPassword:
    secure: v1:abc
`),
    );
    expect(file.values).toEqual({ proxy: { port: 9000 } });
    expect(file.encrypted).toEqual(['proxyPassword']);
    expect(stackFileIssues(file)).toEqual([]);
  });

  it('treats a file without config as empty', () => {
    expect(readStackFile(write('encryptionsalt: abc\n')).values).toEqual({});
  });

  it('reports YAML errors and a config that is not a mapping, with the path', () => {
    const bad = write('config: [\n');
    expect(() => readStackFile(bad)).toThrow(bad);
    expect(() => readStackFile(write('config: 5\n'))).toThrow(/"config" must be a mapping/);
  });

  it('refuses a plain-text password and an encrypted plain setting, without showing the password', () => {
    const file = readStackFile(
      write(`config:
  sandbox-kit:proxyPassword: hunter2-hunter2-hunter2
  sandbox-kit:proxy:
    secure: v1:abc
`),
    );
    const issues = stackFileIssues(file);
    expect(issues.map((i) => i.key)).toEqual(['sandbox-kit:proxyPassword', 'sandbox-kit:proxy']);
    expect(issues[0].expected).toContain('pulumi config set --secret sandbox-kit:proxyPassword');
    expect(issues[1].expected).toMatch(/^a plain value/);
    expect(JSON.stringify(issues)).not.toContain('hunter2');
  });
});
