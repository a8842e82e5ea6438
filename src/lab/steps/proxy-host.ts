/**
 * Step: the proxy host. The rendered host files at their real paths (through the proxy node's /etc layer), the
 * sysctls, ss-server under the supervisor that runs the rendered unit, and sshd for `sandbox-kit verify`.
 */
import { join } from 'node:path';
import { sysctlSettings } from '../../render';
import { writeLayerFiles } from '../etc-layer';
import {
  applySysctls,
  defaultRouteDevice,
  hostFilesToLayer,
  readSupervisorStatus,
  startSshd,
  startSupervisor,
  waitListening,
} from '../proxy-host';
import type { LabStep } from './context';

export const proxyHostStep: LabStep = {
  name: 'proxy',
  async run(ctx, state) {
    const say = (message: string) => ctx.progress({ step: 'proxy', message });
    const ns = state.namespaces.proxy!;
    const layer = join(state.dir, 'etc', 'proxy');
    writeLayerFiles(layer, hostFilesToLayer(ctx.hostFiles));
    for (const f of ctx.hostFiles) say(`host file ${f.path} (${f.permissions})`);

    const sysctls = await applySysctls(ns, sysctlSettings(ctx.config.proxy), await defaultRouteDevice(ns));
    for (const [k, v] of Object.entries(sysctls.applied)) say(`sysctl ${k}=${v}`);
    for (const [k, why] of Object.entries(sysctls.notApplied)) say(`sysctl ${k} not applied: ${why}`);

    const supervisor = await startSupervisor(ns, layer, state.dir, ctx.config.proxy.port);
    if (ctx.config.proxy.mode !== 'tcp_only') await waitListening(ns, 'udp', ctx.config.proxy.port, 'ss-server');
    const unit = ctx.hostFiles.find((f) => f.path.endsWith('.service'))!.path;
    say(`ss-server running under the supervisor (unit ${unit}), pid ${readSupervisorStatus(supervisor.statusFile)?.pid}`);

    const ssh = await startSshd(ns, layer, state.dir);
    say(`sshd on ${state.plan.proxyPrimary}:${ssh.port} (root, key ${ssh.clientKey})`);
    return {
      etcLayers: { proxy: layer },
      sysctls,
      supervisorStatusFile: supervisor.statusFile,
      ssh: { clientKey: ssh.clientKey, user: 'root', port: ssh.port },
      processes: [
        { role: 'supervisor', node: 'proxy', pid: supervisor.pid, startTime: supervisor.startTime, log: supervisor.log },
        { role: 'sshd', node: 'proxy', pid: ssh.pid, startTime: ssh.startTime, log: ssh.log },
      ],
    };
  },
};
