/** The runtime: sandboxes as OCI containers over overlayfs layers, their networks, base images, template steps. */
export * from './types';
export { createOciRuntime, OciSandboxRuntime, type OciRuntimeOptions } from './oci-runtime';
export { BridgeNetwork, type BridgeNetworkOptions } from './network/bridge-network';
export {
  createSandboxHostNetwork,
  openSandboxHostNetwork,
  reopenSandboxHostNetwork,
  type SandboxHostNetwork,
} from './network/host-network';
export { CHILD_OOM_SCORE_ADJ } from './oom';
export { DEFAULT_STATE_ROOT } from './instance';
export { cleanupLeftovers, type CleanupOptions, type CleanupReport, unmountBelow } from './cleanup';
export { MmdebstrapImages, debianSuite, BASE_PACKAGES, DEFAULT_USER, type MmdebstrapImagesOptions } from './base-images';
export { createStepExecutor, OciStepExecutor, TIMED_OUT_EXIT_CODE, type StepExecutorOptions } from './step-executor';
export { buildProxyEnv, PROXY_VARIABLES } from './build-proxy-env';
export {
  pullImage,
  resolveImage,
  ImagePullError,
  type ImageConfig,
  type PulledImage,
  type PullOptions,
  type RegistryCredentials,
} from './images';
export { DEFAULT_RUNSC_PLATFORM, RUNSC_PLATFORMS, type RunscPlatform } from './runsc';
