/** Entry point of `pulumi up` (Pulumi.yaml: main: infra/). The program lives in program.ts so tests can run it. */
import { createStack } from './program';

const stack = createStack();

export const ingressIp = stack.ingressIp;
export const egressIp = stack.egressIp;
export const egressMode = stack.egressMode;
export const clientConfigLocal = stack.clientConfigLocal;
export const clientConfigTransparent = stack.clientConfigTransparent;
export const natChainScript = stack.natChainScript;
export const sshUser = stack.sshUser;
export const sshHost = stack.sshHost;
export const verifyCommand = stack.verifyCommand;
