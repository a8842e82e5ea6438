/** Step: the proxy client in every sandbox, started by the rendered start script of the lab's mode. */
import { join } from 'node:path';
import { writeLayerFiles } from '../etc-layer';
import { sandboxClientFiles, startClient } from '../sandbox-client';
import type { LabStep } from './context';

export const sandboxesStep: LabStep = {
  name: 'sandbox',
  async run(ctx, state) {
    const { client, proxy } = ctx.config;
    const etcLayers: Record<string, string> = {};
    const runDirs: Record<string, string> = {};
    const target = `${state.eips.ingress.publicAddress}:${proxy.port}`;
    for (const node of state.sandboxes) {
      etcLayers[node] = join(state.dir, 'etc', node);
      runDirs[node] = join(state.dir, 'run', node);
      writeLayerFiles(etcLayers[node], sandboxClientFiles(ctx.artifacts));
      await startClient(state.namespaces[node]!, etcLayers[node], runDirs[node], ctx.mode, join(state.dir, 'logs', `client-${node}.log`));
      ctx.progress({
        step: 'sandbox',
        message:
          ctx.mode === 'local'
            ? `${node}: ss-local on ${client.localPort} (SOCKS5) -> ${target}`
            : `${node}: ss-redir on ${client.redirectPort}, ss-local on ${client.localPort}, NAT chain up -> ${target}`,
      });
    }
    return { etcLayers, runDirs };
  },
};
