/**
 * The platform's side of `network.rules` (docs/secrets.md): a sandbox created with rules gets its own egress CA
 * (runtime/network/egress-ca.ts) before its container starts, its image's trust stores with the CA appended bound
 * read-only over them, and the variables TLS stacks read; the relay is told where the CA is and where to ask for
 * secrets. Removed with the sandbox.
 */
import { join } from 'node:path';
import { makeEgressCa, removeEgressCa, trustedStores } from '../../runtime/network/egress-ca';
import type { TransformPolicy } from '../../runtime/network/egress-relay/transform';
import type { EgressCa, SandboxRecord } from './record';

export interface EgressTransformOptions {
  /** Parent of the sandboxes' CA directories (the platform's state). */
  caDir: string;
  /** The platform's Unix socket the relay resolves secrets at. */
  resolverSocket: string;
  /** CA files the relay trusts for destinations besides the host's store (the platform option egressUpstreamCaFiles). */
  upstreamCaFiles?: string[];
}

export function caDirOf(o: EgressTransformOptions, sandboxID: string): string {
  return join(o.caDir, sandboxID);
}

/** Makes the sandbox's CA and trust store copies (from its layers, topmost first). */
export async function prepareEgressCa(o: EgressTransformOptions, sandboxID: string, layers: readonly string[]): Promise<EgressCa> {
  const dir = caDirOf(o, sandboxID);
  await makeEgressCa(dir, sandboxID);
  return trustedStores(dir, layers);
}

export function removeSandboxCa(o: EgressTransformOptions, sandboxID: string): void {
  removeEgressCa(caDirOf(o, sandboxID));
}

/** What the relay is told of the sandbox's rules; undefined when it has none. */
export function transformPolicyOf(
  o: EgressTransformOptions | undefined,
  record: Pick<SandboxRecord, 'sandboxID' | 'egress' | 'egressCa'>,
): TransformPolicy | undefined {
  const rules = record.egress?.rules;
  if (!o || !record.egressCa || !rules || Object.keys(rules).length === 0) return undefined;
  return {
    sandboxID: record.sandboxID,
    rules,
    caDir: caDirOf(o, record.sandboxID),
    resolver: o.resolverSocket,
    ...(o.upstreamCaFiles?.length ? { upstreamCaFiles: o.upstreamCaFiles } : {}),
  };
}
