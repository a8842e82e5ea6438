/**
 * The platform on the real runtime with its standalone sandbox network, the real gateway in front, and the
 * unmodified E2B SDK (in a child process) as the client: what every network test drives. Root only.
 */
import * as fs from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, type RunningGateway } from '../../../../src/gateway';
import { startPlatformOnHost, type PlatformOnHost, type PlatformOnHostOptions } from '../../../../src/platform/on-host';
import { openSandboxHostNetwork, type SandboxHostNetwork } from '../../../../src/runtime/network/host-network';
import { baseRootfs, freshAgentPayload, uniqueName } from '../../runtime/helpers/common';
import { SdkDriver } from '../../platform/helpers/sdk-driver';
import { INTERNET, startInternet, type Internet } from './internet';

export interface NetworkRig {
  platform: PlatformOnHost;
  /** The sandboxes' network (its own namespace, with the internet stand-in behind it). */
  net: SandboxHostNetwork;
  internet: Internet;
  gateway: RunningGateway;
  sdk: SdkDriver;
  opts: { apiKey: string; apiUrl: string; sandboxUrl: string };
  stateDir: string;
  /** Runs a shell command in a sandbox through the SDK: exit code and output, never a throw for a non-zero exit. */
  sh(sandboxID: string, command: string, timeoutMs?: number): Promise<{ exitCode: number; stdout: string; stderr: string }>;
  /** Stops the platform and the gateway (sandboxes keep running) and starts both again on the same state. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** `prefix` names the rig's namespaces (`<prefix><random>.host`, `.inet`). */
export async function startRig(options: Partial<PlatformOnHostOptions> = {}, prefix = 'nt'): Promise<NetworkRig> {
  await baseRootfs();
  const stateDir = await mkdtemp(join(tmpdir(), 'skn-'));
  const agent = await freshAgentPayload(join(stateDir, 'bundle'));
  const name = uniqueName(prefix);
  const net = await openSandboxHostNetwork(name, { dnsResolvers: [INTERNET.resolver] });
  let internet: Internet;
  let platform: PlatformOnHost;
  try {
    internet = await startInternet(name, net.namespace, net.subnet);
    platform = await startPlatformOnHost({
      stateDir,
      agent,
      network: net.network,
      log: (line) => process.stderr.write(`platform: ${line}\n`),
      ...options,
    });
  } catch (err) {
    await net.close();
    throw err;
  }
  const gateway = await startGateway({ catalog: platform.catalog });
  const sdk = await SdkDriver.start();
  const opts = { apiKey: platform.apiKey, apiUrl: platform.url, sandboxUrl: `http://127.0.0.1:${gateway.port}` };
  const start = () =>
    startPlatformOnHost({ stateDir, agent, network: net.network, log: (line) => process.stderr.write(`platform: ${line}\n`), ...options });
  const rig: NetworkRig = {
    platform,
    net,
    internet,
    gateway,
    sdk,
    opts,
    stateDir,
    async sh(sandboxID, command, timeoutMs = 30_000) {
      try {
        const r = await sdk.call<{ exitCode: number; stdout: string; stderr: string }>(sandboxID, 'commands.run', command, {
          user: 'root',
          timeoutMs,
        });
        return r;
      } catch (err) {
        const detail = (err as { detail?: { exitCode?: number; stdout?: string; stderr?: string } }).detail;
        if (detail?.exitCode === undefined) throw err;
        return { exitCode: detail.exitCode, stdout: detail.stdout ?? '', stderr: detail.stderr ?? '' };
      }
    },
    async restart() {
      await rig.gateway.close();
      await rig.platform.close();
      rig.platform = await start();
      rig.gateway = await startGateway({ catalog: rig.platform.catalog });
      rig.opts.apiUrl = rig.platform.url;
      rig.opts.apiKey = rig.platform.apiKey;
      rig.opts.sandboxUrl = `http://127.0.0.1:${rig.gateway.port}`;
    },
    async close() {
      await sdk.close();
      await rig.gateway.close();
      await rig.platform.close({ killSandboxes: true });
      internet.close();
      await net.close();
      fs.rmSync(stateDir, { recursive: true, force: true });
    },
  };
  return rig;
}

/** The WebSocket/HTTP echo server script (test/helpers/ws-echo-server.js), to write into a sandbox. */
export const WS_ECHO_SOURCE = fs.readFileSync(join(__dirname, '..', '..', '..', 'helpers', 'ws-echo-server.js'), 'utf8');

/** Starts the echo server in a sandbox as its unprivileged user on `port`, and waits until it listens. */
export async function startEchoIn(rig: NetworkRig, sandboxID: string, port: number): Promise<void> {
  await rig.sdk.call(sandboxID, 'files.write', '/tmp/ws-echo-server.js', WS_ECHO_SOURCE);
  await rig.sdk.call(sandboxID, 'commands.run', `nohup /opt/sandbox-kit/node /tmp/ws-echo-server.js ${port} >/tmp/ws-echo.log 2>&1 &`, {
    user: 'user',
  });
  const wait = await rig.sh(
    sandboxID,
    `for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && exit 0; sleep 0.1; done; cat /tmp/ws-echo.log; exit 1`,
  );
  if (wait.exitCode !== 0) throw new Error(`the echo server did not start in ${sandboxID}: ${wait.stdout}${wait.stderr}`);
}
