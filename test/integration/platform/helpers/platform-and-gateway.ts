/**
 * The platform on the real runtime with the real gateway in front, as the tests that drive it with the unmodified
 * SDK start it: one place for the wiring (the gateway reads the platform's catalog and resumes through it) and for
 * the traces a removed sandbox must not leave.
 */
import { join } from 'node:path';
import { startGateway, type RunningGateway } from '../../../../src/gateway';
import type { GatewayOptions } from '../../../../src/gateway/options';
import { startPlatformOnHost, type PlatformOnHost, type PlatformOnHostOptions } from '../../../../src/platform/on-host';
import type { AgentPayload } from '../../../../src/runtime/agent-payload';
import { instancePaths } from '../../../../src/runtime/instance';
import { tracesOf } from '../../runtime/helpers/common';
import { testRuntime } from '../../../helpers/test-runtime';

export interface PlatformAndGateway {
  platform: PlatformOnHost;
  gateway: RunningGateway;
  /** What the SDK is given: the platform's key, its API URL and the gateway as the sandbox URL. */
  opts: { apiKey: string; apiUrl: string; sandboxUrl: string };
}

export async function startPlatformAndGateway(
  stateDir: string,
  agent: AgentPayload,
  extra: { platform?: Partial<PlatformOnHostOptions>; gateway?: Partial<GatewayOptions> } = {},
): Promise<PlatformAndGateway> {
  const platform = await startPlatformOnHost({
    stateDir,
    agent,
    runtime: testRuntime(),
    log: (line) => process.stderr.write(`platform: ${line}\n`),
    ...extra.platform,
  });
  const gateway = await startGateway({
    catalog: platform.catalog,
    resumeSandbox: async (id) => void (await platform.sandboxes.connect(id, 300)),
    ...extra.gateway,
  });
  return { platform, gateway, opts: { apiKey: platform.apiKey, apiUrl: platform.url, sandboxUrl: `http://127.0.0.1:${gateway.port}` } };
}

/** What is left of a sandbox on the host (its directory, runtime state, network namespace): empty once it is gone. */
export function sandboxTraces(platform: PlatformOnHost, stateDir: string, sandboxID: string): string[] {
  const paths = instancePaths(platform.instance, platform.runtimeName, { dataRoot: join(stateDir, 'runtime') });
  return tracesOf({
    instance: platform.instance,
    sandboxID,
    stateDir: paths.stateDir,
    dataDir: paths.dataDir,
    netns: `${platform.instance}-${sandboxID}`,
  });
}

/** A call of the platform's administration API with the platform's own key; fails the test on an error status. */
export async function adminCall(
  api: { apiUrl: string; apiKey: string },
  method: string,
  path: string,
  body: unknown,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${api.apiUrl}${path}`, {
    method,
    headers: { 'x-api-key': api.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBeLessThan(300);
  return (await res.json()) as Record<string, unknown>;
}
