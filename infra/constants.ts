/** The AWS account that publishes the official Debian cloud images. */
export const DEBIAN_AMI_OWNER = '136693071363';

/** Type tokens of the kit's components: `sandbox-kit:<module>:<Type>`. */
export const TYPE_PROXY_HOST = 'sandbox-kit:aws:ProxyHost';
export const TYPE_EGRESS_ADDRESS = 'sandbox-kit:aws:EgressAddress';

/** Tag keys that carry the generations; a change replaces the tagged resources (replaceOnChanges on `tags`). */
export const HOST_GENERATION_TAG = 'SandboxKitHostGeneration';
export const EGRESS_GENERATION_TAG = 'SandboxKitEgressGeneration';
export const TYPE_RELEASE_BUNDLE = 'sandbox-kit:aws:ReleaseBundle';
export const TYPE_SANDBOX_HOST = 'sandbox-kit:aws:SandboxHost';
export const TYPE_SANDBOX_FLEET = 'sandbox-kit:aws:SandboxFleet';
export const TYPE_VOLUME_STORAGE = 'sandbox-kit:aws:VolumeStorage';
export const TYPE_SANDBOX_FRONTEND = 'sandbox-kit:aws:SandboxFrontend';
export const TYPE_SANDBOX_TEMPLATE = 'sandbox-kit:aws:SandboxTemplate';

/** Tag carrying the sandbox host generation: a change replaces the sandbox host(s). */
export const SANDBOX_GENERATION_TAG = 'SandboxKitSandboxGeneration';

/** The two bundle files the hosts run; scripts/bundle.ts names them. */
export const BUNDLE_CLI = 'sandbox-kit.js';
export const BUNDLE_AGENT = 'agent.js';

/** NFS's port (Amazon EFS mount targets). */
export const NFS_PORT = 2049;
/** Redis's port (ElastiCache). */
export const REDIS_PORT = 6379;
/** HTTPS for the sandbox gateway behind a TLS listener: what `E2B_SANDBOX_URL=https://sandbox.{domain}` dials. */
export const HTTPS_PORT = 443;

/**
 * What the sandbox hosts' role may do in ECR: get a pull token and read images (the read-only set of AWS's own
 * AmazonEC2ContainerRegistryReadOnly), in every repository of the account; nothing that writes.
 */
export const ECR_PULL_POLICY = {
  Version: '2012-10-17',
  Statement: [
    {
      Effect: 'Allow',
      Action: ['ecr:GetAuthorizationToken', 'ecr:BatchCheckLayerAvailability', 'ecr:GetDownloadUrlForLayer', 'ecr:BatchGetImage'],
      Resource: '*',
    },
  ],
} as const;
