/** OCI images from registries as read-only layers: `pullImage` is the entry point. */
export { pullImage, resolveImage, type PulledImage, type PullOptions, type ResolvedImage } from './pull';
export { ImagePullError, hostPlatform, type PullErrorKind, type RegistryCredentials } from './skopeo';
export type { ImageConfig } from './image-config';
export {
  allowsInsecure,
  canonicalReference,
  ecrRegion,
  IMAGE_REFERENCE_RULE,
  isGcpRegistry,
  isLoopbackRegistry,
  parseImageReference,
  type ImageReference,
} from './reference';
