import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../../../src/cli/args';
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

  it('needs a host and a key (a usage error, exit 2)', async () => {
    await expect(run(['--host', '203.0.113.5'])).rejects.toThrow(UsageError);
    await expect(run(['--host', '203.0.113.5'])).rejects.toThrow(/--ssh-key: got \(missing\)/);
    await expect(run([])).rejects.toThrow(/--host or --sandbox-host: got \(missing\).*\n.*--ssh-key: got \(missing\)/);
    await expect(run(['--ssh-key', 'k'])).rejects.toThrow(
      /--host or --sandbox-host: got \(missing\); expected the proxy host and\/or the sandbox host to check/,
    );
  });

  it('refuses a bad port and unknown flags, all at once', async () => {
    await expect(run(['--host', 'h', '--ssh-key', 'k', '--port', '70000', '--bogus'])).rejects.toThrow(
      /--bogus: got \(a switch\); expected one of --host, --sandbox-host, --egress-ip, --check-url, --gateway-url, --ssh-key.*\n.*--port: got "70000"; expected a TCP\/UDP port, an integer from 1 to 65535/,
    );
    expect(errors).toEqual([]);
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
      await expect(run(['--host', '127.0.0.1', '--ssh-key', '/nonexistent/key', '--stack', 'bad'])).rejects.toThrow(
        /sandbox-kit:proxy.port/,
      );
    } finally {
      process.chdir(cwd);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("asks for the fleet's gateway when the stack's sandbox hosts are a fleet, before connecting", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verify-stack-'));
    const cwd = process.cwd();
    try {
      writeFileSync(join(dir, 'Pulumi.yaml'), 'name: sandbox-kit\nruntime: nodejs\n');
      writeFileSync(join(dir, 'Pulumi.fleet.yaml'), 'config:\n  sandbox-kit:fleet:\n    hosts: 3\n');
      process.chdir(dir);
      await expect(run(['--sandbox-host', '10.0.0.23', '--ssh-key', '/nonexistent/key', '--stack', 'fleet'])).rejects.toThrow(
        /--gateway-url: got \(missing\); expected the fleet's gateway, the stack output sandboxUrl \(stack fleet: fleet.hosts 3/,
      );
    } finally {
      process.chdir(cwd);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
