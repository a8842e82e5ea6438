/**
 * Step: the internet's services. What-is-my-IP (HTTP + UDP echo) on the web host; on the edge, a service inside the
 * proxy's private network and a metadata stand-in, both of which the proxy must refuse to reach.
 */
import { join } from 'node:path';
import { labScript } from '../dist-path';
import { waitListening } from '../proxy-host';
import { inNamespace, spawnLabProcess } from '../run';
import type { LabProcess } from '../state';
import type { LabStep } from './context';

export const servicesStep: LabStep = {
  name: 'services',
  async run(ctx, state) {
    const { plan } = state;
    const whoami = labScript('whoami');
    const processes: LabProcess[] = [];
    const start = async (role: string, node: string, argv: string[], port: number): Promise<void> => {
      const log = join(state.dir, 'logs', `${role}.log`);
      const ns = state.namespaces[node]!;
      processes.push({ role, node, ...spawnLabProcess(inNamespace(ns, argv), log), log });
      await waitListening(ns, 'tcp', port, role);
    };
    const web = `${plan.web}:${plan.webHttpPort}`;
    await start(
      'whoami',
      'web',
      [process.execPath, whoami, '--http', web, '--udp', `${plan.web}:${plan.webUdpPort}`, '--name', 'internet'],
      plan.webHttpPort,
    );
    ctx.progress({
      step: 'services',
      message: `what-is-my-IP on ${plan.web}: HTTP ${plan.webHttpPort}/tcp, UDP echo ${plan.webUdpPort}/udp`,
    });
    await start(
      'private-service',
      'inet',
      [process.execPath, whoami, '--http', `0.0.0.0:${plan.webHttpPort}`, '--name', 'private'],
      plan.webHttpPort,
    );
    ctx.progress({
      step: 'services',
      message: `private service on ${plan.edgePrivate}:${plan.webHttpPort} and metadata stand-in on ${plan.metadata}:${plan.webHttpPort}`,
    });
    return { processes };
  },
};
