/**
 * The check that keeps the host's shell profiles out of the tests (test/helpers/host-shell-tripwire.ts): an agent a
 * test runs on the host that starts a login shell fails the test that stops it, before the profile's contents run;
 * a command that needs no profile runs as usual.
 */
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { Process } from '../../../src/contract/gen/process_pb';
import { TRIPWIRE_STATUS } from '../../helpers/host-shell-tripwire';
import { startHostAgent } from './helpers/common';

async function run(port: number, cmd: string, args: string[], stdin = false): Promise<{ stdout: string; exitCode: number | undefined }> {
  const client = createClient(
    Process,
    createConnectTransport({ baseUrl: `http://127.0.0.1:${port}`, httpVersion: '1.1', useBinaryFormat: false }),
  );
  let stdout = '';
  let exitCode: number | undefined;
  for await (const r of client.start({ process: { cmd, args }, stdin })) {
    const e = r.event!.event;
    if (e.case === 'data' && e.value.output.case === 'stdout') stdout += Buffer.from(e.value.output.value).toString();
    if (e.case === 'end') exitCode = e.value.exitCode;
  }
  return { stdout, exitCode };
}

// bash -c reads the bashrc files when its stdin is a socket: the agent's input is a pipe (stdin-pipe.ts) or /dev/null.
test('a command that reads no profile runs, with and without stdin; stopping the agent then passes', async () => {
  const agent = await startHostAgent({ defaultUser: 'root' });
  try {
    expect(await run(agent.port, '/bin/bash', ['-c', 'echo reached'], true)).toEqual({ stdout: 'reached\n', exitCode: 0 });
    expect(await run(agent.port, '/bin/bash', ['-c', 'echo reached'], false)).toEqual({ stdout: 'reached\n', exitCode: 0 });
  } finally {
    await agent.stop();
  }
});

test.each([
  ['a login shell', ['-l', '-c', 'echo reached'], '/etc/profile'],
  ['an interactive shell', ['-i', '-c', 'echo reached'], 'bashrc'],
])('%s of the host ends before the command and fails the test that stops the agent', async (_kind, args, file) => {
  const agent = await startHostAgent({ defaultUser: 'root' });
  let stopped: unknown;
  try {
    expect(await run(agent.port, '/bin/bash', args)).toEqual({ stdout: '', exitCode: TRIPWIRE_STATUS });
  } finally {
    stopped = await agent.stop().then(
      () => 'stopped',
      (err: Error) => err.message,
    );
  }
  expect(stopped).toMatch(/read a shell profile of the host/);
  expect(stopped).toContain(file);
});
