/** Step: the lab's end-to-end question, answered before `labUp` returns: does a sandbox leave through the proxy? */
import { checkEgress, whoamiUrl } from '../egress-check';
import { inNamespace, run } from '../run';
import type { LabStep } from './context';

export const checkStep: LabStep = {
  name: 'check',
  async run(ctx, state) {
    const sandbox = state.sandboxes[0]!;
    const check = await checkEgress({
      exec: (node, argv) => run(inNamespace(state.namespaces[node]!, argv, state.etcLayers[node])),
      mode: ctx.mode,
      sandbox,
      url: whoamiUrl(state.plan.web, state.plan.webHttpPort),
      socksPort: ctx.config.client.localPort,
      expectedEgress: state.eips.egress.publicAddress,
    });
    ctx.progress({ step: 'check', message: `direct from ${check.directFrom}: ${check.direct}` });
    ctx.progress({
      step: 'check',
      message: `through the proxy from ${sandbox}: ${check.proxied} (egress Elastic IP ${check.expectedEgress})`,
    });
    if (!check.ok) {
      throw new Error(
        `egress check failed: through the proxy ${check.proxied}, directly ${check.direct}, expected the proxied address to be ${check.expectedEgress}`,
      );
    }
    return { egressCheck: check };
  },
};
