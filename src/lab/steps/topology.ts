/** Step: the lab's network (namespaces, links, bridges, Elastic IPs at the edge, the optional host link). */
import { buildTopology } from '../topology';
import type { LabStep } from './context';

export const topologyStep: LabStep = {
  name: 'topology',
  async run(ctx, state) {
    const { ingress, egress } = state.eips;
    const topology = await buildTopology({
      lab: ctx.name,
      sandboxes: ctx.sandboxCount,
      hostLink: ctx.hostLink,
      plan: state.plan,
      eips: egress.privateAddress === ingress.privateAddress ? [ingress] : [ingress, egress],
      progress: ctx.progress,
    });
    return {
      namespaces: topology.namespaces,
      sandboxes: topology.sandboxes,
      ...(topology.hostLink ? { hostLink: topology.hostLink } : {}),
    };
  },
};
