import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../../src/cli/commands/verify';

describe('sandbox-kit verify (arguments)', () => {
  let errors: string[];
  let spies: jest.SpyInstance[];
  beforeEach(() => {
    errors = [];
    spies = [
      jest.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void errors.push(args.join(' '))),
      jest.spyOn(console, 'log').mockImplementation(() => undefined),
    ];
  });
  afterEach(() => spies.forEach((s) => s.mockRestore()));

  it('needs a host and a key', async () => {
    expect(await run(['--host', '203.0.113.5'])).toBe(2);
    expect(errors.join('\n')).toMatch(/missing --ssh-key/);
    expect(await run([])).toBe(2);
    expect(errors.join('\n')).toMatch(/missing --host and --ssh-key/);
  });

  it('refuses a bad port and unknown flags', async () => {
    expect(await run(['--host', 'h', '--ssh-key', 'k', '--port', '70000'])).toBe(2);
    expect(errors.join('\n')).toMatch(/--port: expected an integer from 1 to 65535/);
    await expect(run(['--host', 'h', '--ssh-key', 'k', '--bogus'])).rejects.toThrow(/verify: .*bogus.*options: --host, --ssh-key/);
  });

  it('says which key file it cannot read, before connecting', async () => {
    await expect(run(['--host', '127.0.0.1', '--ssh-key', '/nonexistent/key'])).rejects.toThrow(/cannot read SSH key \/nonexistent\/key/);
  });

  it('reports a stack with invalid settings instead of verifying against it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verify-stack-'));
    const cwd = process.cwd();
    try {
      writeFileSync(join(dir, 'Pulumi.yaml'), 'name: sandbox-kit\nruntime: nodejs\n');
      writeFileSync(join(dir, 'Pulumi.bad.yaml'), 'config:\n  sandbox-kit:proxy:\n    port: 0\n');
      process.chdir(dir);
      await expect(run(['--host', '127.0.0.1', '--ssh-key', '/nonexistent/key', '--stack', 'bad'])).rejects.toThrow(/sandbox-kit:proxy.port/);
    } finally {
      process.chdir(cwd);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
