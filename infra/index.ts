/** Entry point of `pulumi up` (Pulumi.yaml: main: infra/). The program lives in program.ts so tests can run it. */
import { createStack } from './program';

// SANDBOX_KIT_BUNDLE_DIR: a release bundle built somewhere else than dist/bundle.
const stack = createStack({ bundleDir: process.env.SANDBOX_KIT_BUNDLE_DIR || undefined });

export const ingressIp = stack.ingressIp;
export const egressIp = stack.egressIp;
export const egressMode = stack.egressMode;
export const clientConfigLocal = stack.clientConfigLocal;
export const clientConfigTransparent = stack.clientConfigTransparent;
export const natChainScript = stack.natChainScript;
export const sshUser = stack.sshUser;
export const sshHost = stack.sshHost;
export const verifyCommand = stack.verifyCommand;
export const apiUrl = stack.apiUrl;
export const sandboxUrl = stack.sandboxUrl;
export const apiKey = stack.apiKey;
export const templateAlias = stack.templateAlias;
export const templateId = stack.templateId;
export const e2bApiUrlExport = stack.e2bApiUrlExport;
export const e2bSandboxUrlExport = stack.e2bSandboxUrlExport;
export const e2bVolumeApiUrlExport = stack.e2bVolumeApiUrlExport;
export const e2bApiKeyExport = stack.e2bApiKeyExport;
export const sandboxHost = stack.sandboxHost;
export const sandboxVerifyCommand = stack.sandboxVerifyCommand;
