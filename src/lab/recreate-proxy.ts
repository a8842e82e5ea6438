/**
 * A new proxy host in a running lab, as bumping host.generation does on AWS: the old ss-server stops, the proxy gets a
 * new ingress Elastic IP and a new password, and ss-server starts again from freshly rendered files. Clients must
 * then get the new config (on AWS: the template is rebuilt and sandboxes recreated); the lab's own sandbox nodes
 * get it here. The egress address stays.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { proxyHostFiles, renderArtifacts } from '../render';
import { sleep } from '../util/poll';
import { signalProcess } from '../util/signal';
import { nextElasticIp } from './address-plan';
import type { ElasticIpMapping } from './eip-nat';
import { writeLayerFiles } from './etc-layer';
import { hostFilesToLayer, startSupervisor } from './proxy-host';
import { isAlive, run } from './run';
import { sandboxClientFiles, startClient } from './sandbox-client';
import type { LabState } from './state';
import { writeState } from './state';
import { applyElasticIps, setEdgeAddresses } from './topology';

async function killAllIn(ns: string, match: (args: string) => boolean): Promise<void> {
  const pids = (await run(['ip', 'netns', 'pids', ns])).stdout
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);
  const ours: number[] = [];
  for (const pid of pids) {
    const args = (await run(['cat', `/proc/${pid}/cmdline`])).stdout.replace(/\0/g, ' ');
    if (match(args)) ours.push(pid);
  }
  for (const pid of ours) signalProcess(pid, 'SIGTERM');
  const deadline = Date.now() + 3_000;
  while (ours.some(isAlive) && Date.now() < deadline) await sleep(50);
  for (const pid of ours) signalProcess(pid, 'SIGKILL');
}

export async function recreateProxyHost(state: LabState): Promise<{ oldIngress: string; newIngress: string }> {
  const { ingress, egress } = state.eips;
  const shared = egress.privateAddress === ingress.privateAddress;
  if (shared) throw new Error('this lab runs with egress.mode=shared: recreate needs a separate egress address');
  let candidate = nextElasticIp(egress.publicAddress, state.plan);
  while (candidate === ingress.publicAddress) candidate = nextElasticIp(candidate, state.plan);
  const newIngress: ElasticIpMapping = { publicAddress: candidate, privateAddress: ingress.privateAddress };

  // The old proxy host goes away: ss-server and its supervisor.
  const proxyNs = state.namespaces.proxy!;
  await killAllIn(proxyNs, (args) => args.includes('supervisor') || args.includes('ss-server'));
  const edge = state.namespaces.inet!;
  await applyElasticIps(edge, [newIngress, egress]);
  await setEdgeAddresses(edge, [newIngress.publicAddress], [ingress.publicAddress]);

  const password = randomBytes(24).toString('base64url');
  writeFileSync(state.passwordFile, `${password}\n`, { mode: 0o600 });
  const inputs = {
    serverIp: newIngress.publicAddress,
    password,
    egressBindAddress: egress.privateAddress,
    hostNetworks: [state.plan.proxySubnet],
  };
  writeLayerFiles(state.etcLayers.proxy!, hostFilesToLayer(proxyHostFiles(state.config, inputs)));
  const supervisor = await startSupervisor(proxyNs, state.etcLayers.proxy!, state.dir, state.config.proxy.port);
  state.processes = state.processes.filter((p) => p.role !== 'supervisor');
  state.processes.push({ role: 'supervisor', node: 'proxy', pid: supervisor.pid, startTime: supervisor.startTime, log: supervisor.log });
  state.eips.ingress = newIngress;
  writeState(state);

  // The lab's own sandbox nodes get the new client config, as recreated sandboxes would.
  const artifacts = renderArtifacts(state.config, inputs);
  for (const node of state.sandboxes) {
    await killAllIn(state.namespaces[node]!, (args) => /ss-(local|redir)/.test(args));
    writeLayerFiles(state.etcLayers[node]!, sandboxClientFiles(artifacts));
    await startClient(
      state.namespaces[node]!,
      state.etcLayers[node]!,
      state.runDirs[node]!,
      state.mode,
      join(state.dir, 'logs', `client-${node}.log`),
    );
  }
  return { oldIngress: ingress.publicAddress, newIngress: newIngress.publicAddress };
}
