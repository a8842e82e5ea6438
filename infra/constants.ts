/** The AWS account that publishes the official Debian cloud images. */
export const DEBIAN_AMI_OWNER = '136693071363';

/** Type tokens of the kit's components: `sandbox-kit:<module>:<Type>`. */
export const TYPE_PROXY_HOST = 'sandbox-kit:aws:ProxyHost';
export const TYPE_EGRESS_ADDRESS = 'sandbox-kit:aws:EgressAddress';

/** Tag keys that carry the generations; a change replaces the tagged resources (replaceOnChanges on `tags`). */
export const HOST_GENERATION_TAG = 'SandboxKitHostGeneration';
export const EGRESS_GENERATION_TAG = 'SandboxKitEgressGeneration';
