import { randomBytes } from 'node:crypto';
import { chownSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadStackConfig, type StackConfig } from '../config';
import { startGateway, type RunningGateway } from '../gateway';
import { MemoryCatalog } from '../catalog';
import { builtEntry, labUp, type Lab, type LabMode, type ProgressFn } from '../lab';
import { writeLayerFiles } from '../lab/etc-layer';
import { sandboxUser } from './sandbox-user';
import { waitForHttp } from './wait-http';

export interface LocalSystemOptions {
  /** Lab name (namespaces sk-<name>-*); default `local`. */
  name?: string;
  mode?: LabMode;
  sandboxes?: number;
  /** Gateway port on 127.0.0.1; default the stack's gateway.port. 0 picks a free one. */
  gatewayPort?: number;
  config?: StackConfig;
  /** The user the agents serve when a request names none; default the stack's agent.defaultUser. */
  defaultUser?: string;
  onProgress?: ProgressFn;
}

export interface LocalSandbox {
  sandboxID: string;
  /** The lab node it runs in (sb1, sb2, ...). */
  node: string;
  address: string;
  agentPort: number;
  /** envdAccessToken: secret; also in the 0600 catalog file. */
  accessToken: string;
}

export interface LocalSystem {
  lab: Lab;
  gateway: RunningGateway;
  sandboxes: LocalSandbox[];
  /** 0600 file listing every sandbox with its token, in the gateway's file-catalog format. */
  catalogFile: string;
  close(): Promise<void>;
}

/**
 * The whole system on one machine: the lab (proxy host, internet, sandboxes with the proxy client), one agent per
 * sandbox, and the gateway in the root namespace routing to them over the lab's host link.
 */
export async function startLocalSystem(options: LocalSystemOptions = {}): Promise<LocalSystem> {
  const config = options.config ?? loadStackConfig({});
  const say = options.onProgress ?? (() => {});
  const lab = await labUp({
    name: options.name ?? 'local',
    mode: options.mode ?? config.template.mode,
    sandboxes: options.sandboxes ?? 2,
    hostLink: true,
    config,
    onProgress: say,
  });
  let gateway: RunningGateway | undefined;
  try {
    const cli = builtEntry('cli/main');
    const dir = join(lab.snapshot.dir, 'agents');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const sandboxes: LocalSandbox[] = [];
    const user = sandboxUser(
      options.defaultUser ?? config.agent.defaultUser,
      readFileSync('/etc/passwd', 'utf8'),
      readFileSync('/etc/group', 'utf8'),
      join(lab.snapshot.dir, 'home', options.defaultUser ?? config.agent.defaultUser),
    );
    if (user.files.length > 0) {
      mkdirSync(user.home, { recursive: true, mode: 0o750 });
      chownSync(user.home, user.uid, user.gid);
      for (const node of lab.sandboxes) writeLayerFiles(lab.snapshot.etcLayers[node]!, user.files);
      say({ step: 'agent', message: `sandbox user ${user.name} (uid ${user.uid}, home ${user.home}) added to the sandboxes' /etc` });
    }
    for (const node of lab.sandboxes) {
      const sandbox: LocalSandbox = {
        sandboxID: `${node}-${randomBytes(4).toString('hex')}`,
        node,
        address: lab.sandboxAddress(node),
        agentPort: config.agent.port,
        accessToken: randomBytes(24).toString('hex'),
      };
      const tokenFile = join(dir, `${node}.token`);
      writeFileSync(tokenFile, `${sandbox.accessToken}\n`, { mode: 0o600 });
      const agent = lab.spawnIn(node, [
        process.execPath,
        cli,
        'agent',
        '--port',
        String(sandbox.agentPort),
        '--token-file',
        tokenFile,
        '--default-user',
        user.name,
        '--brand',
        config.brand,
      ]);
      agent.unref();
      await waitForHttp(`http://${sandbox.address}:${sandbox.agentPort}/health`, 204);
      say({ step: 'agent', message: `${sandbox.sandboxID} in ${node} listening on ${sandbox.address}:${sandbox.agentPort}` });
      sandboxes.push(sandbox);
    }

    const catalogFile = join(lab.snapshot.dir, 'sandboxes.json');
    const entries = sandboxes.map((s) => ({
      sandboxID: s.sandboxID,
      host: s.address,
      agentPort: s.agentPort,
      token: s.accessToken,
      state: 'running' as const,
    }));
    writeFileSync(catalogFile, `${JSON.stringify(entries, null, 2)}\n`, { mode: 0o600 });
    const catalog = new MemoryCatalog(entries);
    gateway = await startGateway({
      catalog,
      host: '127.0.0.1',
      port: options.gatewayPort ?? config.gateway.port,
      brand: config.brand,
      domain: config.gateway.domain,
    });
    say({ step: 'gateway', message: `listening on http://127.0.0.1:${gateway.port}, ${sandboxes.length} sandboxes in its catalog` });
    const running = gateway;
    return {
      lab,
      gateway: running,
      sandboxes,
      catalogFile,
      async close() {
        await running.close(1_000);
        await lab.down(say);
      },
    };
  } catch (err) {
    await gateway?.close(0);
    await lab.down();
    throw err;
  }
}
