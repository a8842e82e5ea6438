// Generated from templates/mcp/public-catalog.json and templates/mcp/catalog.json by scripts/codegen-mcp.ts: do not edit; run the codegen after changing the catalog.

/** Runs the OCI image mcp/airtable-mcp-server (public catalog: airtable-mcp-server). */
export interface AirtableConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  airtableApiKey: string;
  nodeenv: string;
}

/** Runs the OCI image mcp/aks (public catalog: aks). */
export interface AksConfig {
  accessLevel: string;
  additionalTools?: string;
  allowNamespaces?: string;
  azureDir: string;
  containerUser?: string;
  kubeconfig: string;
}

/** Runs the OCI image angelborroy/alfresco-mcp-server (public catalog: alfresco). */
export interface AlfrescoConfig {
  alfrescoHost: string;
}

/** Runs the OCI image mcp/amazon-bedrock-agentcore-mcp-server (public catalog: amazon-bedrock-agentcore). */
export type AmazonBedrockAgentcoreConfig = Record<string, never>;

/** Runs the OCI image mcp/amazon-kendra-index-mcp-server (public catalog: amazon-kendra-index). */
export interface AmazonKendraIndexConfig {
  awsProfile?: string;
  awsRegion?: string;
  kendraIndexId: string;
}

/** Runs the OCI image mcp/amazon-neptune-mcp-server (public catalog: amazon-neptune). */
export interface AmazonNeptuneConfig {
  awsProfile?: string;
  awsRegion?: string;
  neptuneEndpoint: string;
}

/** Runs the OCI image mcp/amazon-qbusiness-anonymous-mcp-server (public catalog: amazon-qbusiness-anonymous). */
export interface AmazonQbusinessAnonymousConfig {
  awsAccessKeyId?: string;
  awsProfile?: string;
  awsRegion?: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSecretAccessKey?: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSessionToken?: string;
  qbusinessApplicationId: string;
}

/** Runs the OCI image mcp/api-gateway (public catalog: mcp-api-gateway). */
export interface ApiGatewayConfig {
  api1HeaderAuthorization: string;
  api1Name: string;
  api1SwaggerUrl: string;
}

/** Runs the OCI image mcp/apify-mcp-server (public catalog: apify-mcp-server). */
export interface ApifyConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apifyToken: string;
  tools: string;
}

/** Runs the OCI image armlimited/arm-mcp:2.4.0 (public catalog: arm-mcp). */
export interface ArmConfig {
  sshKnownHostsPath?: string;
  sshPrivateKeyPath?: string;
  workspacePath: string;
}

/** Runs the OCI image mcp/arxiv-mcp-server (public catalog: arxiv-mcp-server). */
export interface ArxivConfig {
  storagePath: string;
}

/** Runs the OCI image mcp/ast-grep (public catalog: ast-grep). */
export interface AstGrepConfig {
  path: string;
}

/** Runs the OCI image mcp/astra-db (public catalog: astra-db). */
export interface AstraDbConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  astraDbApplicationToken: string;
  endpoint: string;
}

/** Served over HTTP by its vendor at mcp.docs.astro.build (public catalog: astro-docs). */
export type AstroDocsConfig = Record<string, never>;

/** Runs the OCI image mcp/atlan (public catalog: atlan). */
export interface AtlanConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  baseUrl: string;
}

/** Runs the OCI image mcp/atlas-docs (public catalog: atlas-docs). */
export interface AtlasDocsConfig {
  apiUrl: string;
}

/** Runs the OCI image mcp/atlassian (public catalog: atlassian). */
export interface AtlassianConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  confluenceApiToken?: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  confluencePersonalToken?: string;
  confluenceUrl: string;
  confluenceUsername?: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  jiraApiToken?: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  jiraPersonalToken?: string;
  jiraUrl: string;
  jiraUsername?: string;
}

/** Runs the OCI image mcp/audiense-insights (public catalog: audiense-insights). */
export interface AudienseInsightsConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  audienseClientSecret?: string;
  clientId: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  twitterBearerToken?: string;
}

/** Runs the OCI image mcp/aws-api-mcp-server (public catalog: aws-api). */
export interface AwsApiConfig {
  awsAccessKeyId: string;
  awsProfileName: string;
  awsRegion: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSecretAccessKey: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSessionToken: string;
}

/** Runs the OCI image mcp/aws-appsync-mcp-server (public catalog: aws-appsync). */
export interface AwsAppsyncConfig {
  awsAccessKeyId: string;
  awsProfile: string;
  awsRegion: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSecretAccessKey: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSessionToken: string;
}

/** Runs the OCI image mcp/aws-bedrock-custom-model-import-mcp-server (public catalog: aws-bedrock-custom-model-import). */
export interface AwsBedrockCustomModelImportConfig {
  awsAccessKeyId: string;
  awsProfile: string;
  awsRegion: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSecretAccessKey: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSessionToken: string;
  bedrockModelImportS3Bucket: string;
}

/** Runs the OCI image mcp/aws-bedrock-data-automation-mcp-server (public catalog: aws-bedrock-data-automation). */
export interface AwsBedrockDataAutomationConfig {
  awsBucketName: string;
  awsProfile?: string;
  awsRegion?: string;
}

/** Runs the OCI image mcp/aws-cdk-mcp-server (public catalog: aws-cdk-mcp-server). */
export type AwsCdkConfig = Record<string, never>;

/** Runs the OCI image mcp/aws-core-mcp-server (public catalog: aws-core-mcp-server). */
export type AwsCoreConfig = Record<string, never>;

/** Runs the OCI image mcp/aws-dataprocessing-mcp-server (public catalog: aws-dataprocessing). */
export interface AwsDataprocessingConfig {
  awsProfile: string;
  awsRegion: string;
}

/** Runs the OCI image mcp/aws-diagram (public catalog: aws-diagram). */
export interface AwsDiagramConfig {
  outputDir: string;
}

/** Runs the OCI image mcp/aws-documentation (public catalog: aws-documentation). */
export type AwsDocumentationConfig = Record<string, never>;

/** Runs the OCI image mcp/aws-healthomics-mcp-server (public catalog: aws-healthomics). */
export interface AwsHealthomicsConfig {
  awsProfile: string;
  awsRegion: string;
}

/** Runs the OCI image mcp/aws-iot-sitewise-mcp-server (public catalog: aws-iot-sitewise). */
export interface AwsIotSitewiseConfig {
  awsProfile: string;
  awsRegion: string;
}

/** Runs the OCI image mcp/aws-kb-retrieval-server (public catalog: aws-kb-retrieval-server). */
export interface AwsKbRetrievalServerConfig {
  accessKeyId: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSecretAccessKey?: string;
}

/** Runs the OCI image mcp/aws-location-mcp-server (public catalog: aws-location). */
export interface AwsLocationConfig {
  awsAccessKeyId: string;
  awsProfile: string;
  awsRegion: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSecretAccessKey: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSessionToken: string;
}

/** Runs the OCI image mcp/aws-msk-mcp-server (public catalog: aws-msk). */
export interface AwsMskConfig {
  awsAccessKeyId: string;
  awsProfile: string;
  awsRegion: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSecretAccessKey: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSessionToken: string;
}

/** Runs the OCI image mcp/aws-pricing-mcp-server (public catalog: aws-pricing). */
export interface AwsPricingConfig {
  awsAccessKeyId: string;
  awsProfile: string;
  awsRegion: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSecretAccessKey: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSessionToken: string;
}

/** Runs the OCI image mcp/aws-terraform (public catalog: aws-terraform). */
export type AwsTerraformConfig = Record<string, never>;

/** Runs the OCI image mcp/billing-cost-management-mcp-server (public catalog: awslabs-billing-cost-management). */
export interface AwslabsBillingCostManagementConfig {
  awsProfile: string;
  awsRegion: string;
  storageLensManifestLocation: string;
}

/** Runs the OCI image mcp/ccapi-mcp-server (public catalog: awslabs-ccapi). */
export interface AwslabsCcapiConfig {
  awsAccessKeyId: string;
  awsProfile: string;
  awsRegion: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSecretAccessKey: string;
}

/** Runs the OCI image mcp/cfn-mcp-server (public catalog: awslabs-cfn). */
export interface AwslabsCfnConfig {
  awsAccessKeyId: string;
  awsProfile: string;
  awsRegion: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSecretAccessKey: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSessionToken: string;
}

/** Runs the OCI image mcp/cloudtrail-mcp-server (public catalog: awslabs-cloudtrail). */
export interface AwslabsCloudtrailConfig {
  awsProfile: string;
}

/** Runs the OCI image mcp/cloudwatch-mcp-server (public catalog: awslabs-cloudwatch). */
export interface AwslabsCloudwatchConfig {
  awsProfile: string;
  awsRegion: string;
}

/** Runs the OCI image mcp/cloudwatch-appsignals-mcp-server (public catalog: awslabs-cloudwatch-appsignals). */
export interface AwslabsCloudwatchAppsignalsConfig {
  awsProfile: string;
  awsRegion: string;
}

/** Runs the OCI image mcp/cost-explorer-mcp-server (public catalog: awslabs-cost-explorer). */
export interface AwslabsCostExplorerConfig {
  awsAccessKeyId: string;
  awsProfile: string;
  awsRegion: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSecretAccessKey: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSessionToken: string;
}

/** Runs the OCI image mcp/dynamodb-mcp-server (public catalog: awslabs-dynamodb). */
export interface AwslabsDynamodbConfig {
  awsProfile: string;
  awsRegion: string;
}

/** Runs the OCI image mcp/elasticache-mcp-server (public catalog: awslabs-elasticache). */
export interface AwslabsElasticacheConfig {
  awsProfile: string;
  awsRegion: string;
}

/** Runs the OCI image mcp/iam-mcp-server (public catalog: awslabs-iam). */
export interface AwslabsIamConfig {
  awsAccessKeyId: string;
  awsProfile: string;
  awsRegion: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSecretAccessKey: string;
}

/** Runs the OCI image mcp/memcached-mcp-server (public catalog: awslabs-memcached). */
export interface AwslabsMemcachedConfig {
  memcachedHost: string;
  memcachedPort?: string;
}

/** Runs the OCI image mcp/nova-canvas-mcp-server (public catalog: awslabs-nova-canvas). */
export interface AwslabsNovaCanvasConfig {
  awsAccessKeyId: string;
  awsProfile: string;
  awsRegion: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSecretAccessKey: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSessionToken: string;
}

/** Runs the OCI image mcp/redshift-mcp-server (public catalog: awslabs-redshift). */
export interface AwslabsRedshiftConfig {
  awsProfile: string;
  awsRegion: string;
}

/** Runs the OCI image mcp/s3-tables-mcp-server (public catalog: awslabs-s3-tables). */
export interface AwslabsS3TablesConfig {
  awsAccessKeyId: string;
  awsProfile: string;
  awsRegion: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSecretAccessKey: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSessionToken: string;
}

/** Runs the OCI image mcp/timestream-for-influxdb-mcp-server (public catalog: awslabs-timestream-for-influxdb). */
export interface AwslabsTimestreamForInfluxdbConfig {
  awsProfile: string;
  awsRegion: string;
}

/** Runs the OCI image mcp/valkey-mcp-server (public catalog: awslabs-valkey). */
export interface AwslabsValkeyConfig {
  valkeyHost: string;
  valkeyPort: string;
}

/** Runs the OCI image mcr.microsoft.com/azure-sdk/azure-mcp (public catalog: azure). */
export type AzureConfig = Record<string, never>;

/** Runs the OCI image mcp/beagle-security-mcp-server (public catalog: beagle-security). */
export interface BeagleSecurityConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  beagleSecurityApiToken: string;
}

/** Runs the OCI image mcp/bitrefill (public catalog: bitrefill). */
export interface BitrefillConfig {
  apiId: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  apiSecret?: string;
}

/** Runs the OCI image mcp/box (public catalog: box). */
export interface BoxConfig {
  clientId: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  clientSecret?: string;
}

/** Runs the OCI image mcp/brave-search (public catalog: brave). */
export interface BraveConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Runs the OCI image mcp/browserbase (public catalog: browserbase). */
export interface BrowserbaseConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  geminiApiKey: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  projectId: string;
}

/** Runs the OCI image mcp/buildkite (public catalog: buildkite). */
export interface BuildkiteConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiToken: string;
}

/** Runs the OCI image mcp/camunda (public catalog: camunda). */
export interface CamundaConfig {
  camundahost: string;
}

/** Runs the OCI image mcp/charmhealth-mcp-server (public catalog: charmhealth-mcp-server). */
export interface CharmhealthConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  charmhealthApiKey: string;
  charmhealthBaseUrl: string;
  charmhealthClientId: string;
  charmhealthClientSecret: string;
  charmhealthRedirectUri: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  charmhealthRefreshToken: string;
  charmhealthTokenUrl: string;
}

/** Runs the OCI image mcp/chroma (public catalog: chroma). */
export interface ChromaConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Runs the OCI image mcp/circleci (public catalog: circleci). */
export interface CircleciConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  token: string;
  url: string;
}

/** Runs the OCI image mcp/clickhouse (public catalog: clickhouse). */
export interface ClickhouseConfig {
  connectTimeout: string;
  host: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  password: string;
  port: string;
  secure: string;
  sendReceiveTimeout: string;
  user: string;
  verify: string;
}

/** Served over HTTP by its vendor at mcp.close.com (public catalog: close). */
export interface CloseConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Runs the OCI image mcp/cloud-run-mcp (public catalog: cloud-run-mcp). */
export interface CloudRunConfig {
  credentialsPath: string;
}

/** Served over HTTP by its vendor at docs.mcp.cloudflare.com (public catalog: cloudflare-docs). */
export type CloudflareDocsConfig = Record<string, never>;

/** Runs the OCI image mcp/cockroachdb (public catalog: cockroachdb). */
export interface CockroachdbConfig {
  caPath: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  crdbPwd: string;
  database: string;
  host: string;
  port: string | number;
  sslCertfile: string;
  sslKeyfile: string;
  sslMode: string;
  username: string;
}

/** Runs the OCI image mcp/mcp-code-interpreter (public catalog: mcp-code-interpreter). */
export type CodeInterpreterConfig = Record<string, never>;

/** Served over HTTP by its vendor at mcp.context7.com (public catalog: context7). */
export interface Context7Config {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Runs the OCI image mcp/couchbase (public catalog: couchbase). */
export interface CouchbaseConfig {
  cbBucketName: string;
  cbConnectionString: string;
  cbMcpReadOnlyQueryMode: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  cbPassword: string;
  cbUsername: string;
}

/** Runs the OCI image mcp/cylera-mcp-server (public catalog: cylera-mcp-server). */
export interface CyleraConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  cyleraBaseUrl: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  cyleraPassword: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  cyleraUsername: string;
}

/** Runs the OCI image mcp/cyreslab-ai-shodan (public catalog: cyreslab-ai-shodan). */
export interface CyreslabAiShodanConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  shodanApiKey: string;
}

/** Runs the OCI image mcp/dappier (public catalog: dappier). */
export interface DappierConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Served over HTTP by its vendor at mcp.dappier.com (public catalog: dappier-remote). */
export interface DappierRemoteConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  dappierRemoteApiKey: string;
}

/** Runs the OCI image mcp/dart (public catalog: dart). */
export interface DartConfig {
  host: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  token: string;
}

/** Runs the OCI image souhardyak/mcp-db-server (public catalog: database-server). */
export interface DatabaseServerConfig {
  databaseUrl: string;
}

/** Runs the OCI image mcp/databutton (public catalog: databutton). */
export type DatabuttonConfig = Record<string, never>;

/** Served over HTTP by its vendor at mcp.deepwiki.com (public catalog: deepwiki). */
export type DeepwikiConfig = Record<string, never>;

/** Runs the OCI image mcp/descope (public catalog: descope). */
export interface DescopeConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  managementKey?: string;
  projectId: string;
}

/** Runs the OCI image mcp/desktop-commander (public catalog: desktop-commander). */
export interface DesktopCommanderConfig {
  paths: string[];
}

/** Runs the OCI image mcp/devhub-cms (public catalog: devhub-cms). */
export interface DevhubCmsConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  devhubApiKey?: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  devhubApiSecret?: string;
  url: string;
}

/** Runs the OCI image mcp/mcp-discord (public catalog: mcp-discord). */
export interface DiscordConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  discordToken: string;
}

/** Runs the OCI image mcp/dockerhub (public catalog: dockerhub). */
export interface DockerhubConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  hubPatToken: string;
  username: string;
}

/** Served over HTTP by its vendor at mcp.dodopayments.com (public catalog: dodo-payments). */
export interface DodoPaymentsConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  dodoPaymentsApiKey: string;
}

/** Runs the OCI image vrogozhin/dotnet-types-explorer-mcp:1.1.7 (public catalog: dotnet-types-explorer). */
export type DotnetTypesExplorerConfig = Record<string, never>;

/** Runs the OCI image mcp/df-mcp (public catalog: dreamfactory-mcp). */
export interface DreamfactoryConfig {
  dreamfactoryapikey: string;
  dreamfactoryurl: string;
}

/** Runs the OCI image mcp/duckduckgo (public catalog: duckduckgo). */
export type DuckduckgoConfig = Record<string, never>;

/** Runs the OCI image mcp/dynatrace-mcp-server (public catalog: dynatrace-mcp-server). */
export interface DynatraceConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  oauthClientId: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  oauthClientSecret: string;
  url: string;
}

/** Runs the OCI image mcp/e2b (public catalog: e2b). */
export interface E2bConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Runs the OCI image mcp/edubase (public catalog: edubase). */
export interface EdubaseConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey?: string;
  app: string;
  url: string;
}

/** Runs the OCI image mcp/effect-mcp (public catalog: effect-mcp). */
export type EffectConfig = Record<string, never>;

/** Runs the OCI image mcp/elasticsearch (public catalog: elasticsearch). */
export interface ElasticsearchConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  esApiKey?: string;
  url: string;
}

/** Runs the OCI image mcp/elevenlabs (public catalog: elevenlabs). */
export interface ElevenlabsConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey?: string;
  data: string;
}

/** Runs the OCI image mcp/everart (public catalog: everart). */
export interface EverartConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Reference server that exercises every MCP feature: echo, add, long-running operations, sampling, resources and prompts. */
export type EverythingConfig = Record<string, never>;

/** Runs the OCI image mcp/exa (public catalog: exa). */
export interface ExaConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Runs the OCI image mcp/explorium (public catalog: explorium). */
export interface ExploriumConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiAccessToken: string;
}

/** Runs the OCI image mcp/fetch (public catalog: fetch). */
export type FetchConfig = Record<string, never>;

/** Runs the OCI image mcp/fibery (public catalog: fibery). */
export interface FiberyConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiToken: string;
  host: string;
}

/** Reference server for reading, writing, searching and editing files inside the allowed directories only. */
export interface FilesystemConfig {
  /** Directories the server may access; anything outside them is refused. */
  paths: string[];
}

/** Served over HTTP by its vendor at api.findadomain.dev (public catalog: find-a-domain). */
export type FindADomainConfig = Record<string, never>;

/** Runs the OCI image mcp/firecrawl (public catalog: firecrawl). */
export interface FirecrawlConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
  creditCriticalThreshold: number;
  creditWarningThreshold: number;
  retryBackoffFactor: number;
  retryDelay: number;
  retryMax: number;
  retryMaxDelay: number;
  url: string;
}

/** Runs the OCI image mcp/firewalla-mcp-server (public catalog: firewalla-mcp-server). */
export interface FirewallaConfig {
  boxId: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  firewallaMspToken: string;
  mspId: string;
}

/** Runs the OCI image mcp/gemini-api-docs-mcp (public catalog: gemini-api-docs). */
export type GeminiApiDocsConfig = Record<string, never>;

/** Runs the OCI image mcp/git (public catalog: git). */
export interface GitConfig {
  paths: string[];
}

/** Runs the OCI image mcp/github (public catalog: github). */
export interface GithubConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  personalAccessToken: string;
}

/** Runs the OCI image mcp/github-chat (public catalog: github-chat). */
export interface GithubChatConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  githubApiKey: string;
}

/** Runs the OCI image ghcr.io/github/github-mcp-server (public catalog: github-official). */
export interface GithubOfficialConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  githubPersonalAccessToken: string;
}

/** Runs the OCI image mcp/gitlab (public catalog: gitlab). */
export interface GitlabConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  personalAccessToken: string;
  url: string;
}

/** Served over HTTP by its vendor at gitmcp.io (public catalog: gitmcp). */
export type GitmcpConfig = Record<string, never>;

/** Runs the OCI image mcp/glif (public catalog: glif). */
export interface GlifConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiToken: string;
  ids: string;
  ignoredSaved: boolean;
}

/** Runs the OCI image yashtekwani/gmail-mcp (public catalog: gmail-mcp). */
export interface GmailConfig {
  emailAddress: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  emailPassword?: string;
}

/** Runs the OCI image mcp/google-flights (public catalog: google-flights). */
export type GoogleFlightsConfig = Record<string, never>;

/** Runs the OCI image mcp/google-maps (public catalog: google-maps). */
export interface GoogleMapsConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  googleMapsApiKey: string;
}

/** Runs the OCI image mcp/google-maps-comprehensive (public catalog: google-maps-comprehensive). */
export interface GoogleMapsComprehensiveConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  googleMapsApiKey: string;
}

/** Runs the OCI image mcp/grafana (public catalog: grafana). */
export interface GrafanaConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
  url: string;
}

/** Runs the OCI image mcp/gyazo (public catalog: gyazo). */
export interface GyazoConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  accessToken: string;
}

/** Runs the OCI image mcp/hackernews-mcp (public catalog: mcp-hackernews). */
export type HackernewsConfig = Record<string, never>;

/** Runs the OCI image mcp/hackle (public catalog: hackle). */
export interface HackleConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Runs the OCI image mcp/handwriting-ocr (public catalog: handwriting-ocr). */
export interface HandwritingOcrConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiToken: string;
}

/** Runs the OCI image mcp/hdx (public catalog: hdx). */
export interface HdxConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  appIdentifier: string;
}

/** Runs the OCI image mcp/heroku (public catalog: heroku). */
export interface HerokuConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Runs the OCI image mcp/api-mcp-server (public catalog: hostinger-mcp-server). */
export interface HostingerConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apitoken: string;
}

/** Runs the OCI image kapish88/hoverfly-mcp-server (public catalog: hoverfly-mcp-server). */
export interface HoverflyConfig {
  data: string;
}

/** Served over HTTP by its vendor at app.hubspot.com (public catalog: hubspot). */
export interface HubspotConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Served over HTTP by its vendor at huggingface.co (public catalog: hugging-face). */
export type HuggingFaceConfig = Record<string, never>;

/** Runs the OCI image hummingbot/hummingbot-mcp (public catalog: hummingbot-mcp). */
export interface HummingbotConfig {
  apiUrl: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  hummingbotApiPassword?: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  hummingbotApiUsername?: string;
}

/** Runs the OCI image mcp/husqvarna-automower (public catalog: husqvarna-automower). */
export interface HusqvarnaAutomowerConfig {
  clientId: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  husqvarnaClientSecret: string;
}

/** Runs the OCI image mcp/hyperbrowser (public catalog: hyperbrowser). */
export interface HyperbrowserConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Runs the OCI image mcp/hyperspell (public catalog: hyperspell). */
export interface HyperspellConfig {
  collection: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  token: string;
  useResources: boolean;
}

/** Runs the OCI image mcp/iaptic (public catalog: iaptic). */
export interface IapticConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey?: string;
  appName: string;
}

/** Runs the OCI image mcp/inspektor-gadget (public catalog: inspektor-gadget). */
export interface InspektorGadgetConfig {
  gadgetImages?: string;
  kubeconfig: string;
}

/** Served over HTTP by its vendor at www.javadocs.dev (public catalog: javadocs). */
export type JavadocsConfig = Record<string, never>;

/** Runs the OCI image mcp/jetbrains (public catalog: jetbrains). */
export interface JetbrainsConfig {
  port: string | number;
}

/** Runs the OCI image aywengo/kafka-schema-reg-mcp:stable (public catalog: kafka-schema-reg-mcp). */
export interface KafkaSchemaRegConfig {
  registryUrl: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  schemaRegistryPassword?: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  schemaRegistryUser?: string;
  slimMode?: string;
  viewonly?: string;
}

/** Runs the OCI image mcp/kagisearch (public catalog: kagisearch). */
export interface KagisearchConfig {
  engine: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  kagiApiKey: string;
}

/** Runs the OCI image mcp/keboola-mcp (public catalog: keboola-mcp). */
export interface KeboolaConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  kbcStorageToken: string;
  kbcWorkspaceSchema: string;
}

/** Runs the OCI image mcp/kong (public catalog: kong). */
export interface KongConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  konnectAccessToken: string;
  region: string;
}

/** Runs the OCI image mcp/kubectl-mcp-server (public catalog: kubectl-mcp-server). */
export interface KubectlConfig {
  kubeconfig: string;
}

/** Runs the OCI image mcp/kubernetes (public catalog: kubernetes). */
export interface KubernetesConfig {
  configPath: string;
}

/** Runs the OCI image mcp/lara (public catalog: lara). */
export interface LaraConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  accessKeySecret?: string;
  keyId: string;
}

/** Runs the OCI image mcp/line (public catalog: line). */
export interface LineConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  channelAccessToken?: string;
  userId: string;
}

/** Runs the OCI image stickerdaniel/linkedin-mcp-server:1.4.0 (public catalog: linkedin-mcp-server). */
export interface LinkedinConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  linkedinCookie: string;
  userAgent: string;
}

/** Served over HTTP by its vendor at mcp.llmtxt.dev (public catalog: llmtxt). */
export type LlmtxtConfig = Record<string, never>;

/** Runs the OCI image mcp/maestro-mcp-server (public catalog: maestro-mcp-server). */
export interface MaestroConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKeyApiKey: string;
}

/** Served over HTTP by its vendor at api.manifold.markets (public catalog: manifold). */
export type ManifoldConfig = Record<string, never>;

/** Runs the OCI image mcp/mapbox (public catalog: mapbox). */
export interface MapboxConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  accessToken: string;
}

/** Runs the OCI image mcp/mapbox-devkit (public catalog: mapbox-devkit). */
export interface MapboxDevkitConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  mapboxAccessToken: string;
}

/** Runs the OCI image mcp/markdownify (public catalog: markdownify). */
export interface MarkdownifyConfig {
  paths: string[];
}

/** Runs the OCI image mcp/markitdown (public catalog: markitdown). */
export interface MarkitdownConfig {
  paths: string[];
}

/** Runs the OCI image arvindand/maven-tools-mcp:latest (public catalog: maven-tools-mcp). */
export type MavenToolsConfig = Record<string, never>;

/** Reference server keeping a knowledge graph of entities, relations and observations in a JSONL file. */
export interface MemoryConfig {
  /** Path of the JSONL file the graph is stored in (default: memory.jsonl beside the server). */
  memoryFilePath?: string;
}

/** Served over HTTP by its vendor at mcp.mercadolibre.com (public catalog: mercado-libre). */
export interface MercadoLibreConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  mercadoLibreApiKey: string;
}

/** Served over HTTP by its vendor at mcp.mercadopago.com (public catalog: mercado-pago). */
export interface MercadoPagoConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  mercadoPagoApiKey: string;
}

/** Runs the OCI image mcp/metabase (public catalog: metabase). */
export interface MetabaseConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
  metabaseurl: string;
  metabaseusername: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  password: string;
}

/** Runs the OCI image mcp/minecraft-wiki (public catalog: minecraft-wiki). */
export type MinecraftWikiConfig = Record<string, never>;

/** Runs the OCI image mcp/mongodb (public catalog: mongodb). */
export interface MongodbConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  mdbMcpConnectionString: string;
}

/** Runs the OCI image mcp/multiversx-mx (public catalog: multiversx-mx). */
export interface MultiversxMxConfig {
  network: string;
  wallet: string;
}

/** Runs the OCI image mcp/n8n (public catalog: n8n). */
export interface N8nConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
  apiUrl: string;
}

/** Runs the OCI image mcp/nasdaq-data-link (public catalog: nasdaq-data-link). */
export interface NasdaqDataLinkConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  nasdaqDataLinkApiKey: string;
}

/** Runs the OCI image mcp/needle-mcp (public catalog: needle-mcp). */
export interface NeedleConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  needleApiKey: string;
}

/** Runs the OCI image mcp/neo4j (public catalog: neo4j). */
export interface Neo4jConfig {
  database: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  password: string;
  readOnly: boolean;
  telemetry: boolean;
  uri: string;
  username: string;
}

/** Runs the OCI image mcp/neo4j-cloud-aura-api (public catalog: neo4j-cloud-aura-api). */
export interface Neo4jCloudAuraApiConfig {
  clientId: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  neo4jAuraClientSecret?: string;
  serverAllowOrigins?: string;
  serverAllowedHosts?: string;
  serverHost?: string;
  serverPath?: string;
  serverPort?: string;
  transport?: string;
}

/** Runs the OCI image mcp/neo4j-cypher (public catalog: neo4j-cypher). */
export interface Neo4jCypherConfig {
  database?: string;
  namespace?: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  neo4jPassword?: string;
  readOnly?: boolean;
  readTimeout?: string;
  responseTokenLimit?: string;
  schemaSampleSize?: string;
  serverAllowOrigins?: string;
  serverAllowedHosts?: string;
  serverHost?: string;
  serverPath?: string;
  serverPort?: string;
  transport?: string;
  url: string;
  username: string;
}

/** Runs the OCI image mcp/neo4j-data-modeling (public catalog: neo4j-data-modeling). */
export interface Neo4jDataModelingConfig {
  serverAllowOrigins: string;
  serverAllowedHosts: string;
  serverHost: string;
  serverPath: string;
  serverPort: string;
  transport: string;
}

/** Runs the OCI image mcp/neo4j-memory (public catalog: neo4j-memory). */
export interface Neo4jMemoryConfig {
  database?: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  neo4jPassword?: string;
  serverAllowOrigins?: string;
  serverAllowedHosts?: string;
  serverHost?: string;
  serverPath?: string;
  serverPort?: string;
  transport?: string;
  url: string;
  username: string;
}

/** Runs the OCI image mcp/neon (public catalog: neon). */
export interface NeonConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Runs the OCI image mcp/next-devtools-mcp (public catalog: next-devtools-mcp). */
export type NextDevtoolsConfig = Record<string, never>;

/** Runs the OCI image mcp/node-code-sandbox (public catalog: node-code-sandbox). */
export type NodeCodeSandboxConfig = Record<string, never>;

/** Runs the OCI image mcp/notion (public catalog: notion). */
export interface NotionConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  internalIntegrationToken: string;
}

/** Runs the OCI image mcp/novita (public catalog: novita). */
export type NovitaConfig = Record<string, never>;

/** Runs the OCI image mcp/npm-sentinel (public catalog: npm-sentinel). */
export type NpmSentinelConfig = Record<string, never>;

/** Runs the OCI image mcp/obsidian (public catalog: obsidian). */
export interface ObsidianConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Runs the OCI image mcp/okta-mcp-server (public catalog: okta-mcp-server). */
export interface OktaConfig {
  logPath: string;
  oktaClientId: string;
  oktaKeyId: string;
  oktaLogLevel: string;
  oktaOrgUrl: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  oktaPrivateKey: string;
  oktaScopes: string;
}

/** Runs the OCI image mcp/okta-mcp-fctr (public catalog: okta-mcp-fctr). */
export interface OktaMcpFctrConfig {
  clientOrgurl: string;
  concurrentLimit?: string;
  logLevel?: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  oktaApiToken?: string;
}

/** Runs the OCI image mcp/omi (public catalog: omi). */
export interface OmiConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Runs the OCI image mcp/onlyoffice-docspace (public catalog: onlyoffice-docspace). */
export interface OnlyofficeDocspaceConfig {
  baseUrl: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  docspaceApiKey: string;
}

/** Runs the OCI image mcp/openapi (public catalog: openapi). */
export interface OpenapiConfig {
  mode: string;
}

/** Runs the OCI image mcp/openapi-schema (public catalog: openapi-schema). */
export interface OpenapiSchemaConfig {
  SchemaPath: string;
}

/** Runs the OCI image mcp/openbnb-airbnb (public catalog: openbnb-airbnb). */
export type OpenbnbAirbnbConfig = Record<string, never>;

/** Served over HTTP by its vendor at api.openmesh.dev (public catalog: openmesh). */
export type OpenmeshConfig = Record<string, never>;

/** Runs the OCI image mcp/openweather (public catalog: openweather). */
export interface OpenweatherConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  owmApiKey: string;
}

/** Served over HTTP by its vendor at mcp.openzeppelin.com (public catalog: openzeppelin-cairo). */
export type OpenzeppelinCairoConfig = Record<string, never>;

/** Served over HTTP by its vendor at mcp.openzeppelin.com (public catalog: openzeppelin-solidity). */
export type OpenzeppelinSolidityConfig = Record<string, never>;

/** Served over HTTP by its vendor at mcp.openzeppelin.com (public catalog: openzeppelin-stellar). */
export type OpenzeppelinStellarConfig = Record<string, never>;

/** Served over HTTP by its vendor at mcp.openzeppelin.com (public catalog: openzeppelin-stylus). */
export type OpenzeppelinStylusConfig = Record<string, never>;

/** Runs the OCI image mcp/opik (public catalog: opik). */
export interface OpikConfig {
  apiBaseUrl: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
  workspaceName: string;
}

/** Runs the OCI image codygreen719/opine-mcp-server (public catalog: opine-mcp-server). */
export interface OpineConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  opineApiKey: string;
}

/** Runs the OCI image mcp/oracle (public catalog: oracle). */
export interface OracleConfig {
  oracleConnectionString: string;
  oracleUser: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  password: string;
}

/** Runs the OCI image mcp/osp_marketing_tools (public catalog: osp_marketing_tools). */
export type OspMarketingToolsConfig = Record<string, never>;

/** Runs the OCI image mcp/oxylabs (public catalog: oxylabs). */
export interface OxylabsConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  password?: string;
  username: string;
}

/** Runs the OCI image mcp/paper-search (public catalog: paper-search). */
export type PaperSearchConfig = Record<string, never>;

/** Runs the OCI image mcp/perplexity-ask (public catalog: perplexity-ask). */
export interface PerplexityAskConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  perplexityApiKey: string;
}

/** Runs the OCI image mcp/pia (public catalog: pia). */
export interface PiaConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Runs the OCI image mcp/pinecone (public catalog: pinecone). */
export interface PineconeConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
  assistantHost: string;
}

/** Runs the OCI image mcp/mcp-playwright (public catalog: playwright-mcp-server). */
export interface PlaywrightConfig {
  data: string;
}

/** Runs the OCI image mcp/pluggedin-mcp-proxy (public catalog: pluggedin-mcp-proxy). */
export interface PluggedinMcpProxyConfig {
  pluggedinApiBaseUrl: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  pluggedinApiKey: string;
}

/** Served over HTTP by its vendor at api.polarsignals.com (public catalog: polar-signals). */
export interface PolarSignalsConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  polarSignalsApiKey: string;
}

/** Runs the OCI image mcp/pomodash (public catalog: pomodash). */
export interface PomodashConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Runs the OCI image mcp/postman (public catalog: postman). */
export interface PostmanConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Runs the OCI image mcp/pref-editor (public catalog: pref-editor). */
export type PrefEditorConfig = Record<string, never>;

/** Runs the OCI image ghcr.io/pab1it0/prometheus-mcp-server (public catalog: prometheus). */
export interface PrometheusConfig {
  prometheusUrl: string;
}

/** Runs the OCI image mcp/proxmox (public catalog: proxmox). */
export interface ProxmoxConfig {
  host: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  password?: string;
  port?: string;
  timeout?: string;
  tokenName: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  tokenValue: string;
  user?: string;
  verifySsl?: string;
}

/** Runs the OCI image mcp/puppeteer (public catalog: puppeteer). */
export type PuppeteerConfig = Record<string, never>;

/** Runs the OCI image mcp/mcp-python-refactoring (public catalog: mcp-python-refactoring). */
export type PythonRefactoringConfig = Record<string, never>;

/** Runs the OCI image mcp/quantconnect (public catalog: quantconnect). */
export interface QuantconnectConfig {
  agentname: string;
  quantconnectapitoken: string;
  quantconnectuserid: string;
}

/** Runs the OCI image mcp/ramparts (public catalog: ramparts). */
export type RampartsConfig = Record<string, never>;

/** Runs the OCI image mcp/razorpay (public catalog: razorpay). */
export interface RazorpayConfig {
  keyId: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  keySecret?: string;
}

/** Runs the OCI image mcp/reddit-mcp (public catalog: mcp-reddit). */
export interface RedditConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  redditClientId: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  redditClientSecret: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  redditPassword: string;
  username: string;
}

/** Runs the OCI image mcp/redis (public catalog: redis). */
export interface RedisConfig {
  caCerts: string;
  caPath: string;
  certReqs: string;
  clusterMode: boolean;
  host: string;
  port: string | number;
  /** Secret: passed by env or a 0600 file, never shown. */
  pwd: string;
  ssl: boolean;
  sslCertfile: string;
  sslKeyfile: string;
  username: string;
}

/** Runs the OCI image mcp/redis-cloud (public catalog: redis-cloud). */
export interface RedisCloudConfig {
  apiKey: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  secretKey?: string;
}

/** Runs the OCI image mcp/ref-tools-mcp (public catalog: ref). */
export interface RefConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Served over HTTP by its vendor at mcp.remote-mcp.com (public catalog: remote-mcp). */
export type RemoteConfig = Record<string, never>;

/** Runs the OCI image mcp/render (public catalog: render). */
export interface RenderConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Runs the OCI image mcp/resend (public catalog: resend). */
export interface ResendConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey?: string;
  replyTo: string;
  sender: string;
}

/** Runs the OCI image mcp/risken (public catalog: risken). */
export interface RiskenConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  accessToken: string;
  url: string;
}

/** Runs the OCI image mcp/ros2 (public catalog: ros2). */
export type Ros2Config = Record<string, never>;

/** Served over HTTP by its vendor at rube.app (public catalog: rube). */
export interface RubeConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Runs the OCI image mcp/rust-mcp-filesystem (public catalog: rust-mcp-filesystem). */
export interface RustMcpFilesystemConfig {
  allowWrite: boolean;
  allowedDirectories: string[];
  enableRoots: boolean;
}

/** Runs the OCI image mcp/schemacrawler-ai (public catalog: schemacrawler-ai). */
export interface SchemacrawlerAiConfig {
  generalInfoLevel: string;
  generalLogLevel?: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  schcrwlrDatabasePassword?: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  schcrwlrDatabaseUser?: string;
  serverConnectionDatabase?: string;
  serverConnectionHost?: string;
  serverConnectionPort?: string | number;
  serverConnectionServer: string;
  urlConnectionJdbcUrl: string;
  volumeHostShare: string;
}

/** Runs the OCI image mcp/schogini_mcp_image_border (public catalog: schogini-mcp-image-border). */
export type SchoginiMcpImageBorderConfig = Record<string, never>;

/** Runs the OCI image mcp/scrapegraph (public catalog: scrapegraph). */
export interface ScrapegraphConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  sgaiApiKey: string;
}

/** Runs the OCI image mcp/scrapezy (public catalog: scrapezy). */
export interface ScrapezyConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Runs the OCI image mcp/securenote-link-mcp-server (public catalog: securenote-link-mcp-server). */
export type SecurenoteLinkConfig = Record<string, never>;

/** Served over HTTP by its vendor at mcp.semgrep.ai (public catalog: semgrep). */
export type SemgrepConfig = Record<string, never>;

/** Runs the OCI image mcp/sentry (public catalog: sentry). */
export interface SentryConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  authToken: string;
}

/** Runs the OCI image mcp/sequa (public catalog: sequa). */
export interface SequaConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
  mcpServerUrl: string;
}

/** Reference server for dynamic, reflective problem solving through a revisable sequence of thoughts. */
export interface SequentialThinkingConfig {
  /** Do not print each thought to the server's stderr. */
  disableThoughtLogging?: boolean;
}

/** Served over HTTP by its vendor at ai-assistant.short.io (public catalog: short-io). */
export interface ShortIoConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  shortIoApiKey: string;
}

/** Runs the OCI image mayurkakade/mcp-server:latest (public catalog: simplechecklist). */
export type SimplechecklistConfig = Record<string, never>;

/** Runs the OCI image mcp/singlestore (public catalog: singlestore). */
export interface SinglestoreConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  mcpApiKey: string;
}

/** Runs the OCI image mcp/slack (public catalog: slack). */
export interface SlackConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  botToken?: string;
  channelIds?: string;
  teamId: string;
}

/** Runs the OCI image mcp/smartbear (public catalog: smartbear). */
export interface SmartbearConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiHubApiKey: string;
  bugsnagApiKey: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  bugsnagAuthToken: string;
  bugsnagEndpoint: string;
  pactBrokerBaseUrl: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  pactBrokerPassword: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  pactBrokerToken: string;
  pactBrokerUsername: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  reflectApiToken: string;
}

/** Runs the OCI image mcp/sonarqube (public catalog: sonarqube). */
export interface SonarqubeConfig {
  org: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  token: string;
  url: string;
}

/** Runs the OCI image mcp/sqlite-mcp-server (public catalog: sqlite-mcp-server). */
export type SqliteConfig = Record<string, never>;

/** Runs the OCI image ghcr.io/stackgenhq/stackgen (public catalog: stackgen). */
export interface StackgenConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  token?: string;
  url: string;
}

/** Runs the OCI image mcp/stackhawk (public catalog: stackhawk). */
export interface StackhawkConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Runs the OCI image mcp/stripe (public catalog: stripe). */
export interface StripeConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  secretKey: string;
}

/** Runs the OCI image ghcr.io/supadata-ai/mcp (public catalog: supadata). */
export interface SupadataConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Runs the OCI image mcp/suzieq-mcp (public catalog: suzieq). */
export interface SuzieqConfig {
  apiEndpoint: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Runs the OCI image ghcr.io/jpicklyk/task-orchestrator (public catalog: task-orchestrator). */
export type TaskOrchestratorConfig = Record<string, never>;

/** Runs the OCI image mcp/tavily (public catalog: tavily). */
export interface TavilyConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Runs the OCI image mcp/teamwork (public catalog: teamwork). */
export interface TeamworkConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  twMcpBearerToken: string;
}

/** Served over HTTP by its vendor at api.telnyx.com (public catalog: telnyx). */
export interface TelnyxConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Runs the OCI image mcp/temporal (public catalog: temporal). */
export interface TemporalConfig {
  apiKey?: string;
  temporalHost: string;
  temporalNamespace: string;
  temporalTlsClientCertPath?: string;
  temporalTlsClientKeyPath?: string;
  temporalTlsEnabled?: string;
}

/** Runs the OCI image hashicorp/terraform-mcp-server (public catalog: terraform). */
export type TerraformConfig = Record<string, never>;

/** Runs the OCI image mcp/testkube (public catalog: testkube). */
export interface TestkubeConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  tkAccessToken: string;
  tkControlPlaneUrl: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  tkEnvId: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  tkOrgId: string;
}

/** Runs the OCI image mcp/text-to-graphql (public catalog: text-to-graphql). */
export interface TextToGraphqlConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  graphqlApiKey: string;
  graphqlAuthType: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  graphqlEndpoint: string;
  modelName: string;
  modelTemperature: number;
  /** Secret: passed by env or a 0600 file, never shown. */
  openaiApiKey: string;
}

/** Runs the OCI image mcp/thingsboard (public catalog: thingsboard). */
export interface ThingsboardConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  password?: string;
  url: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  username?: string;
}

/** Runs the OCI image mcp/tigris (public catalog: tigris). */
export interface TigrisConfig {
  awsAccessKeyId: string;
  awsEndpointUrlS3: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  awsSecretAccessKey?: string;
}

/** Runs the OCI image mcp/time (public catalog: time). */
export type TimeConfig = Record<string, never>;

/** Runs the OCI image mcp/unreal-engine-mcp-server (public catalog: unreal-engine-mcp-server). */
export interface UnrealEngineConfig {
  logLevel?: string;
  ueHost: string;
  ueRcHttpPort: string;
  ueRcWsPort: string;
}

/** Runs the OCI image mcp/vectra-ai-rux-mcp-server (public catalog: vectra-ai-rux-mcp-server). */
export interface VectraAiRuxConfig {
  VECTRACLIENTID: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  vectraClientSecret?: string;
  vectraUrl?: string;
}

/** Runs the OCI image mcp/veyrax (public catalog: veyrax). */
export interface VeyraxConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  apiKey: string;
}

/** Runs the OCI image ghcr.io/victoriametrics-community/mcp-victorialogs (public catalog: victorialogs). */
export interface VictorialogsConfig {
  mcpDisabledTools?: string;
  mcpHeartbeatInterval?: string;
  mcpListenAddr?: string;
  mcpServerMode?: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  vlInstanceBearerToken?: string;
  vlInstanceEntrypoint: string;
  vlInstanceHeaders?: string;
}

/** Runs the OCI image ghcr.io/victoriametrics-community/mcp-victoriametrics (public catalog: victoriametrics). */
export interface VictoriametricsConfig {
  mcpDisableResources?: string;
  mcpDisabledTools?: string;
  mcpHeartbeatInterval?: string;
  mcpListenAddr?: string;
  mcpServerMode?: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  vmInstanceBearerToken?: string;
  vmInstanceEntrypoint: string;
  vmInstanceHeaders?: string;
  vmInstanceType: string;
}

/** Runs the OCI image ghcr.io/victoriametrics-community/mcp-victoriatraces (public catalog: victoriatraces). */
export interface VictoriatracesConfig {
  mcpDisabledTools?: string;
  mcpHeartbeatInterval?: string;
  mcpListenAddr?: string;
  mcpServerMode?: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  vtInstanceBearerToken?: string;
  vtInstanceEntrypoint: string;
  vtInstanceHeaders?: string;
}

/** Runs the OCI image mcp/vizro (public catalog: vizro). */
export type VizroConfig = Record<string, never>;

/** Runs the OCI image mcp/vuln-nist-mcp-server (public catalog: vuln-nist-mcp-server). */
export type VulnNistConfig = Record<string, never>;

/** Served over HTTP by its vendor at app.wayfound.ai (public catalog: wayfound). */
export interface WayfoundConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  mcpApiKey: string;
}

/** Runs the OCI image mcp/webflow (public catalog: webflow). */
export interface WebflowConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  token: string;
}

/** Runs the OCI image mcp/wikipedia-mcp (public catalog: wikipedia-mcp). */
export type WikipediaConfig = Record<string, never>;

/** Runs the OCI image mcp/wolfram-alpha (public catalog: wolfram-alpha). */
export interface WolframAlphaConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  wolframApiKey: string;
}

/** Runs the OCI image mcp/youtube-transcript (public catalog: youtube_transcript). */
export type YoutubeTranscriptConfig = Record<string, never>;

/** Runs the OCI image mcp/zen (public catalog: zen). */
export interface ZenConfig {
  /** Secret: passed by env or a 0600 file, never shown. */
  geminiApiKey: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  openaiApiKey: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  openrouterApiKey: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  xaiApiKey: string;
}

/** Runs the OCI image mcp/zerodha-kite (public catalog: zerodha-kite). */
export interface ZerodhaKiteConfig {
  kiteAccessToken?: string;
  kiteApiKey: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  kiteApiSecret?: string;
  kiteRedirectUrl?: string;
}

/** Runs the OCI image mcp/zscaler-mcp-server (public catalog: zscaler-mcp-server). */
export interface ZscalerConfig {
  disabledServices: string;
  disabledTools: string;
  skipConfirmations: string;
  writeEnabled: string;
  writeTools: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  zscalerClientId: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  zscalerClientSecret: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  zscalerCloud: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  zscalerCustomerId: string;
  /** Secret: passed by env or a 0600 file, never shown. */
  zscalerVanityDomain: string;
}

/** Every catalog server, by name: the `mcp` option of a sandbox or template. */
export interface McpServers {
  /** Runs the OCI image mcp/airtable-mcp-server (public catalog: airtable-mcp-server). */
  airtable?: AirtableConfig;
  /** Runs the OCI image mcp/aks (public catalog: aks). */
  aks?: AksConfig;
  /** Runs the OCI image angelborroy/alfresco-mcp-server (public catalog: alfresco). */
  alfresco?: AlfrescoConfig;
  /** Runs the OCI image mcp/amazon-bedrock-agentcore-mcp-server (public catalog: amazon-bedrock-agentcore). */
  amazonBedrockAgentcore?: AmazonBedrockAgentcoreConfig;
  /** Runs the OCI image mcp/amazon-kendra-index-mcp-server (public catalog: amazon-kendra-index). */
  amazonKendraIndex?: AmazonKendraIndexConfig;
  /** Runs the OCI image mcp/amazon-neptune-mcp-server (public catalog: amazon-neptune). */
  amazonNeptune?: AmazonNeptuneConfig;
  /** Runs the OCI image mcp/amazon-qbusiness-anonymous-mcp-server (public catalog: amazon-qbusiness-anonymous). */
  amazonQbusinessAnonymous?: AmazonQbusinessAnonymousConfig;
  /** Runs the OCI image mcp/api-gateway (public catalog: mcp-api-gateway). */
  apiGateway?: ApiGatewayConfig;
  /** Runs the OCI image mcp/apify-mcp-server (public catalog: apify-mcp-server). */
  apify?: ApifyConfig;
  /** Runs the OCI image armlimited/arm-mcp:2.4.0 (public catalog: arm-mcp). */
  arm?: ArmConfig;
  /** Runs the OCI image mcp/arxiv-mcp-server (public catalog: arxiv-mcp-server). */
  arxiv?: ArxivConfig;
  /** Runs the OCI image mcp/ast-grep (public catalog: ast-grep). */
  astGrep?: AstGrepConfig;
  /** Runs the OCI image mcp/astra-db (public catalog: astra-db). */
  astraDb?: AstraDbConfig;
  /** Served over HTTP by its vendor at mcp.docs.astro.build (public catalog: astro-docs). */
  astroDocs?: AstroDocsConfig;
  /** Runs the OCI image mcp/atlan (public catalog: atlan). */
  atlan?: AtlanConfig;
  /** Runs the OCI image mcp/atlas-docs (public catalog: atlas-docs). */
  atlasDocs?: AtlasDocsConfig;
  /** Runs the OCI image mcp/atlassian (public catalog: atlassian). */
  atlassian?: AtlassianConfig;
  /** Runs the OCI image mcp/audiense-insights (public catalog: audiense-insights). */
  audienseInsights?: AudienseInsightsConfig;
  /** Runs the OCI image mcp/aws-api-mcp-server (public catalog: aws-api). */
  awsApi?: AwsApiConfig;
  /** Runs the OCI image mcp/aws-appsync-mcp-server (public catalog: aws-appsync). */
  awsAppsync?: AwsAppsyncConfig;
  /** Runs the OCI image mcp/aws-bedrock-custom-model-import-mcp-server (public catalog: aws-bedrock-custom-model-import). */
  awsBedrockCustomModelImport?: AwsBedrockCustomModelImportConfig;
  /** Runs the OCI image mcp/aws-bedrock-data-automation-mcp-server (public catalog: aws-bedrock-data-automation). */
  awsBedrockDataAutomation?: AwsBedrockDataAutomationConfig;
  /** Runs the OCI image mcp/aws-cdk-mcp-server (public catalog: aws-cdk-mcp-server). */
  awsCdk?: AwsCdkConfig;
  /** Runs the OCI image mcp/aws-core-mcp-server (public catalog: aws-core-mcp-server). */
  awsCore?: AwsCoreConfig;
  /** Runs the OCI image mcp/aws-dataprocessing-mcp-server (public catalog: aws-dataprocessing). */
  awsDataprocessing?: AwsDataprocessingConfig;
  /** Runs the OCI image mcp/aws-diagram (public catalog: aws-diagram). */
  awsDiagram?: AwsDiagramConfig;
  /** Runs the OCI image mcp/aws-documentation (public catalog: aws-documentation). */
  awsDocumentation?: AwsDocumentationConfig;
  /** Runs the OCI image mcp/aws-healthomics-mcp-server (public catalog: aws-healthomics). */
  awsHealthomics?: AwsHealthomicsConfig;
  /** Runs the OCI image mcp/aws-iot-sitewise-mcp-server (public catalog: aws-iot-sitewise). */
  awsIotSitewise?: AwsIotSitewiseConfig;
  /** Runs the OCI image mcp/aws-kb-retrieval-server (public catalog: aws-kb-retrieval-server). */
  awsKbRetrievalServer?: AwsKbRetrievalServerConfig;
  /** Runs the OCI image mcp/aws-location-mcp-server (public catalog: aws-location). */
  awsLocation?: AwsLocationConfig;
  /** Runs the OCI image mcp/aws-msk-mcp-server (public catalog: aws-msk). */
  awsMsk?: AwsMskConfig;
  /** Runs the OCI image mcp/aws-pricing-mcp-server (public catalog: aws-pricing). */
  awsPricing?: AwsPricingConfig;
  /** Runs the OCI image mcp/aws-terraform (public catalog: aws-terraform). */
  awsTerraform?: AwsTerraformConfig;
  /** Runs the OCI image mcp/billing-cost-management-mcp-server (public catalog: awslabs-billing-cost-management). */
  awslabsBillingCostManagement?: AwslabsBillingCostManagementConfig;
  /** Runs the OCI image mcp/ccapi-mcp-server (public catalog: awslabs-ccapi). */
  awslabsCcapi?: AwslabsCcapiConfig;
  /** Runs the OCI image mcp/cfn-mcp-server (public catalog: awslabs-cfn). */
  awslabsCfn?: AwslabsCfnConfig;
  /** Runs the OCI image mcp/cloudtrail-mcp-server (public catalog: awslabs-cloudtrail). */
  awslabsCloudtrail?: AwslabsCloudtrailConfig;
  /** Runs the OCI image mcp/cloudwatch-mcp-server (public catalog: awslabs-cloudwatch). */
  awslabsCloudwatch?: AwslabsCloudwatchConfig;
  /** Runs the OCI image mcp/cloudwatch-appsignals-mcp-server (public catalog: awslabs-cloudwatch-appsignals). */
  awslabsCloudwatchAppsignals?: AwslabsCloudwatchAppsignalsConfig;
  /** Runs the OCI image mcp/cost-explorer-mcp-server (public catalog: awslabs-cost-explorer). */
  awslabsCostExplorer?: AwslabsCostExplorerConfig;
  /** Runs the OCI image mcp/dynamodb-mcp-server (public catalog: awslabs-dynamodb). */
  awslabsDynamodb?: AwslabsDynamodbConfig;
  /** Runs the OCI image mcp/elasticache-mcp-server (public catalog: awslabs-elasticache). */
  awslabsElasticache?: AwslabsElasticacheConfig;
  /** Runs the OCI image mcp/iam-mcp-server (public catalog: awslabs-iam). */
  awslabsIam?: AwslabsIamConfig;
  /** Runs the OCI image mcp/memcached-mcp-server (public catalog: awslabs-memcached). */
  awslabsMemcached?: AwslabsMemcachedConfig;
  /** Runs the OCI image mcp/nova-canvas-mcp-server (public catalog: awslabs-nova-canvas). */
  awslabsNovaCanvas?: AwslabsNovaCanvasConfig;
  /** Runs the OCI image mcp/redshift-mcp-server (public catalog: awslabs-redshift). */
  awslabsRedshift?: AwslabsRedshiftConfig;
  /** Runs the OCI image mcp/s3-tables-mcp-server (public catalog: awslabs-s3-tables). */
  awslabsS3Tables?: AwslabsS3TablesConfig;
  /** Runs the OCI image mcp/timestream-for-influxdb-mcp-server (public catalog: awslabs-timestream-for-influxdb). */
  awslabsTimestreamForInfluxdb?: AwslabsTimestreamForInfluxdbConfig;
  /** Runs the OCI image mcp/valkey-mcp-server (public catalog: awslabs-valkey). */
  awslabsValkey?: AwslabsValkeyConfig;
  /** Runs the OCI image mcr.microsoft.com/azure-sdk/azure-mcp (public catalog: azure). */
  azure?: AzureConfig;
  /** Runs the OCI image mcp/beagle-security-mcp-server (public catalog: beagle-security). */
  beagleSecurity?: BeagleSecurityConfig;
  /** Runs the OCI image mcp/bitrefill (public catalog: bitrefill). */
  bitrefill?: BitrefillConfig;
  /** Runs the OCI image mcp/box (public catalog: box). */
  box?: BoxConfig;
  /** Runs the OCI image mcp/brave-search (public catalog: brave). */
  brave?: BraveConfig;
  /** Runs the OCI image mcp/browserbase (public catalog: browserbase). */
  browserbase?: BrowserbaseConfig;
  /** Runs the OCI image mcp/buildkite (public catalog: buildkite). */
  buildkite?: BuildkiteConfig;
  /** Runs the OCI image mcp/camunda (public catalog: camunda). */
  camunda?: CamundaConfig;
  /** Runs the OCI image mcp/charmhealth-mcp-server (public catalog: charmhealth-mcp-server). */
  charmhealth?: CharmhealthConfig;
  /** Runs the OCI image mcp/chroma (public catalog: chroma). */
  chroma?: ChromaConfig;
  /** Runs the OCI image mcp/circleci (public catalog: circleci). */
  circleci?: CircleciConfig;
  /** Runs the OCI image mcp/clickhouse (public catalog: clickhouse). */
  clickhouse?: ClickhouseConfig;
  /** Served over HTTP by its vendor at mcp.close.com (public catalog: close). */
  close?: CloseConfig;
  /** Runs the OCI image mcp/cloud-run-mcp (public catalog: cloud-run-mcp). */
  cloudRun?: CloudRunConfig;
  /** Served over HTTP by its vendor at docs.mcp.cloudflare.com (public catalog: cloudflare-docs). */
  cloudflareDocs?: CloudflareDocsConfig;
  /** Runs the OCI image mcp/cockroachdb (public catalog: cockroachdb). */
  cockroachdb?: CockroachdbConfig;
  /** Runs the OCI image mcp/mcp-code-interpreter (public catalog: mcp-code-interpreter). */
  codeInterpreter?: CodeInterpreterConfig;
  /** Served over HTTP by its vendor at mcp.context7.com (public catalog: context7). */
  context7?: Context7Config;
  /** Runs the OCI image mcp/couchbase (public catalog: couchbase). */
  couchbase?: CouchbaseConfig;
  /** Runs the OCI image mcp/cylera-mcp-server (public catalog: cylera-mcp-server). */
  cylera?: CyleraConfig;
  /** Runs the OCI image mcp/cyreslab-ai-shodan (public catalog: cyreslab-ai-shodan). */
  cyreslabAiShodan?: CyreslabAiShodanConfig;
  /** Runs the OCI image mcp/dappier (public catalog: dappier). */
  dappier?: DappierConfig;
  /** Served over HTTP by its vendor at mcp.dappier.com (public catalog: dappier-remote). */
  dappierRemote?: DappierRemoteConfig;
  /** Runs the OCI image mcp/dart (public catalog: dart). */
  dart?: DartConfig;
  /** Runs the OCI image souhardyak/mcp-db-server (public catalog: database-server). */
  databaseServer?: DatabaseServerConfig;
  /** Runs the OCI image mcp/databutton (public catalog: databutton). */
  databutton?: DatabuttonConfig;
  /** Served over HTTP by its vendor at mcp.deepwiki.com (public catalog: deepwiki). */
  deepwiki?: DeepwikiConfig;
  /** Runs the OCI image mcp/descope (public catalog: descope). */
  descope?: DescopeConfig;
  /** Runs the OCI image mcp/desktop-commander (public catalog: desktop-commander). */
  desktopCommander?: DesktopCommanderConfig;
  /** Runs the OCI image mcp/devhub-cms (public catalog: devhub-cms). */
  devhubCms?: DevhubCmsConfig;
  /** Runs the OCI image mcp/mcp-discord (public catalog: mcp-discord). */
  discord?: DiscordConfig;
  /** Runs the OCI image mcp/dockerhub (public catalog: dockerhub). */
  dockerhub?: DockerhubConfig;
  /** Served over HTTP by its vendor at mcp.dodopayments.com (public catalog: dodo-payments). */
  dodoPayments?: DodoPaymentsConfig;
  /** Runs the OCI image vrogozhin/dotnet-types-explorer-mcp:1.1.7 (public catalog: dotnet-types-explorer). */
  dotnetTypesExplorer?: DotnetTypesExplorerConfig;
  /** Runs the OCI image mcp/df-mcp (public catalog: dreamfactory-mcp). */
  dreamfactory?: DreamfactoryConfig;
  /** Runs the OCI image mcp/duckduckgo (public catalog: duckduckgo). */
  duckduckgo?: DuckduckgoConfig;
  /** Runs the OCI image mcp/dynatrace-mcp-server (public catalog: dynatrace-mcp-server). */
  dynatrace?: DynatraceConfig;
  /** Runs the OCI image mcp/e2b (public catalog: e2b). */
  e2b?: E2bConfig;
  /** Runs the OCI image mcp/edubase (public catalog: edubase). */
  edubase?: EdubaseConfig;
  /** Runs the OCI image mcp/effect-mcp (public catalog: effect-mcp). */
  effect?: EffectConfig;
  /** Runs the OCI image mcp/elasticsearch (public catalog: elasticsearch). */
  elasticsearch?: ElasticsearchConfig;
  /** Runs the OCI image mcp/elevenlabs (public catalog: elevenlabs). */
  elevenlabs?: ElevenlabsConfig;
  /** Runs the OCI image mcp/everart (public catalog: everart). */
  everart?: EverartConfig;
  /** Reference server that exercises every MCP feature: echo, add, long-running operations, sampling, resources and prompts. */
  everything?: EverythingConfig;
  /** Runs the OCI image mcp/exa (public catalog: exa). */
  exa?: ExaConfig;
  /** Runs the OCI image mcp/explorium (public catalog: explorium). */
  explorium?: ExploriumConfig;
  /** Runs the OCI image mcp/fetch (public catalog: fetch). */
  fetch?: FetchConfig;
  /** Runs the OCI image mcp/fibery (public catalog: fibery). */
  fibery?: FiberyConfig;
  /** Reference server for reading, writing, searching and editing files inside the allowed directories only. */
  filesystem?: FilesystemConfig;
  /** Served over HTTP by its vendor at api.findadomain.dev (public catalog: find-a-domain). */
  findADomain?: FindADomainConfig;
  /** Runs the OCI image mcp/firecrawl (public catalog: firecrawl). */
  firecrawl?: FirecrawlConfig;
  /** Runs the OCI image mcp/firewalla-mcp-server (public catalog: firewalla-mcp-server). */
  firewalla?: FirewallaConfig;
  /** Runs the OCI image mcp/gemini-api-docs-mcp (public catalog: gemini-api-docs). */
  geminiApiDocs?: GeminiApiDocsConfig;
  /** Runs the OCI image mcp/git (public catalog: git). */
  git?: GitConfig;
  /** Runs the OCI image mcp/github (public catalog: github). */
  github?: GithubConfig;
  /** Runs the OCI image mcp/github-chat (public catalog: github-chat). */
  githubChat?: GithubChatConfig;
  /** Runs the OCI image ghcr.io/github/github-mcp-server (public catalog: github-official). */
  githubOfficial?: GithubOfficialConfig;
  /** Runs the OCI image mcp/gitlab (public catalog: gitlab). */
  gitlab?: GitlabConfig;
  /** Served over HTTP by its vendor at gitmcp.io (public catalog: gitmcp). */
  gitmcp?: GitmcpConfig;
  /** Runs the OCI image mcp/glif (public catalog: glif). */
  glif?: GlifConfig;
  /** Runs the OCI image yashtekwani/gmail-mcp (public catalog: gmail-mcp). */
  gmail?: GmailConfig;
  /** Runs the OCI image mcp/google-flights (public catalog: google-flights). */
  googleFlights?: GoogleFlightsConfig;
  /** Runs the OCI image mcp/google-maps (public catalog: google-maps). */
  googleMaps?: GoogleMapsConfig;
  /** Runs the OCI image mcp/google-maps-comprehensive (public catalog: google-maps-comprehensive). */
  googleMapsComprehensive?: GoogleMapsComprehensiveConfig;
  /** Runs the OCI image mcp/grafana (public catalog: grafana). */
  grafana?: GrafanaConfig;
  /** Runs the OCI image mcp/gyazo (public catalog: gyazo). */
  gyazo?: GyazoConfig;
  /** Runs the OCI image mcp/hackernews-mcp (public catalog: mcp-hackernews). */
  hackernews?: HackernewsConfig;
  /** Runs the OCI image mcp/hackle (public catalog: hackle). */
  hackle?: HackleConfig;
  /** Runs the OCI image mcp/handwriting-ocr (public catalog: handwriting-ocr). */
  handwritingOcr?: HandwritingOcrConfig;
  /** Runs the OCI image mcp/hdx (public catalog: hdx). */
  hdx?: HdxConfig;
  /** Runs the OCI image mcp/heroku (public catalog: heroku). */
  heroku?: HerokuConfig;
  /** Runs the OCI image mcp/api-mcp-server (public catalog: hostinger-mcp-server). */
  hostinger?: HostingerConfig;
  /** Runs the OCI image kapish88/hoverfly-mcp-server (public catalog: hoverfly-mcp-server). */
  hoverfly?: HoverflyConfig;
  /** Served over HTTP by its vendor at app.hubspot.com (public catalog: hubspot). */
  hubspot?: HubspotConfig;
  /** Served over HTTP by its vendor at huggingface.co (public catalog: hugging-face). */
  huggingFace?: HuggingFaceConfig;
  /** Runs the OCI image hummingbot/hummingbot-mcp (public catalog: hummingbot-mcp). */
  hummingbot?: HummingbotConfig;
  /** Runs the OCI image mcp/husqvarna-automower (public catalog: husqvarna-automower). */
  husqvarnaAutomower?: HusqvarnaAutomowerConfig;
  /** Runs the OCI image mcp/hyperbrowser (public catalog: hyperbrowser). */
  hyperbrowser?: HyperbrowserConfig;
  /** Runs the OCI image mcp/hyperspell (public catalog: hyperspell). */
  hyperspell?: HyperspellConfig;
  /** Runs the OCI image mcp/iaptic (public catalog: iaptic). */
  iaptic?: IapticConfig;
  /** Runs the OCI image mcp/inspektor-gadget (public catalog: inspektor-gadget). */
  inspektorGadget?: InspektorGadgetConfig;
  /** Served over HTTP by its vendor at www.javadocs.dev (public catalog: javadocs). */
  javadocs?: JavadocsConfig;
  /** Runs the OCI image mcp/jetbrains (public catalog: jetbrains). */
  jetbrains?: JetbrainsConfig;
  /** Runs the OCI image aywengo/kafka-schema-reg-mcp:stable (public catalog: kafka-schema-reg-mcp). */
  kafkaSchemaReg?: KafkaSchemaRegConfig;
  /** Runs the OCI image mcp/kagisearch (public catalog: kagisearch). */
  kagisearch?: KagisearchConfig;
  /** Runs the OCI image mcp/keboola-mcp (public catalog: keboola-mcp). */
  keboola?: KeboolaConfig;
  /** Runs the OCI image mcp/kong (public catalog: kong). */
  kong?: KongConfig;
  /** Runs the OCI image mcp/kubectl-mcp-server (public catalog: kubectl-mcp-server). */
  kubectl?: KubectlConfig;
  /** Runs the OCI image mcp/kubernetes (public catalog: kubernetes). */
  kubernetes?: KubernetesConfig;
  /** Runs the OCI image mcp/lara (public catalog: lara). */
  lara?: LaraConfig;
  /** Runs the OCI image mcp/line (public catalog: line). */
  line?: LineConfig;
  /** Runs the OCI image stickerdaniel/linkedin-mcp-server:1.4.0 (public catalog: linkedin-mcp-server). */
  linkedin?: LinkedinConfig;
  /** Served over HTTP by its vendor at mcp.llmtxt.dev (public catalog: llmtxt). */
  llmtxt?: LlmtxtConfig;
  /** Runs the OCI image mcp/maestro-mcp-server (public catalog: maestro-mcp-server). */
  maestro?: MaestroConfig;
  /** Served over HTTP by its vendor at api.manifold.markets (public catalog: manifold). */
  manifold?: ManifoldConfig;
  /** Runs the OCI image mcp/mapbox (public catalog: mapbox). */
  mapbox?: MapboxConfig;
  /** Runs the OCI image mcp/mapbox-devkit (public catalog: mapbox-devkit). */
  mapboxDevkit?: MapboxDevkitConfig;
  /** Runs the OCI image mcp/markdownify (public catalog: markdownify). */
  markdownify?: MarkdownifyConfig;
  /** Runs the OCI image mcp/markitdown (public catalog: markitdown). */
  markitdown?: MarkitdownConfig;
  /** Runs the OCI image arvindand/maven-tools-mcp:latest (public catalog: maven-tools-mcp). */
  mavenTools?: MavenToolsConfig;
  /** Reference server keeping a knowledge graph of entities, relations and observations in a JSONL file. */
  memory?: MemoryConfig;
  /** Served over HTTP by its vendor at mcp.mercadolibre.com (public catalog: mercado-libre). */
  mercadoLibre?: MercadoLibreConfig;
  /** Served over HTTP by its vendor at mcp.mercadopago.com (public catalog: mercado-pago). */
  mercadoPago?: MercadoPagoConfig;
  /** Runs the OCI image mcp/metabase (public catalog: metabase). */
  metabase?: MetabaseConfig;
  /** Runs the OCI image mcp/minecraft-wiki (public catalog: minecraft-wiki). */
  minecraftWiki?: MinecraftWikiConfig;
  /** Runs the OCI image mcp/mongodb (public catalog: mongodb). */
  mongodb?: MongodbConfig;
  /** Runs the OCI image mcp/multiversx-mx (public catalog: multiversx-mx). */
  multiversxMx?: MultiversxMxConfig;
  /** Runs the OCI image mcp/n8n (public catalog: n8n). */
  n8n?: N8nConfig;
  /** Runs the OCI image mcp/nasdaq-data-link (public catalog: nasdaq-data-link). */
  nasdaqDataLink?: NasdaqDataLinkConfig;
  /** Runs the OCI image mcp/needle-mcp (public catalog: needle-mcp). */
  needle?: NeedleConfig;
  /** Runs the OCI image mcp/neo4j (public catalog: neo4j). */
  neo4j?: Neo4jConfig;
  /** Runs the OCI image mcp/neo4j-cloud-aura-api (public catalog: neo4j-cloud-aura-api). */
  neo4jCloudAuraApi?: Neo4jCloudAuraApiConfig;
  /** Runs the OCI image mcp/neo4j-cypher (public catalog: neo4j-cypher). */
  neo4jCypher?: Neo4jCypherConfig;
  /** Runs the OCI image mcp/neo4j-data-modeling (public catalog: neo4j-data-modeling). */
  neo4jDataModeling?: Neo4jDataModelingConfig;
  /** Runs the OCI image mcp/neo4j-memory (public catalog: neo4j-memory). */
  neo4jMemory?: Neo4jMemoryConfig;
  /** Runs the OCI image mcp/neon (public catalog: neon). */
  neon?: NeonConfig;
  /** Runs the OCI image mcp/next-devtools-mcp (public catalog: next-devtools-mcp). */
  nextDevtools?: NextDevtoolsConfig;
  /** Runs the OCI image mcp/node-code-sandbox (public catalog: node-code-sandbox). */
  nodeCodeSandbox?: NodeCodeSandboxConfig;
  /** Runs the OCI image mcp/notion (public catalog: notion). */
  notion?: NotionConfig;
  /** Runs the OCI image mcp/novita (public catalog: novita). */
  novita?: NovitaConfig;
  /** Runs the OCI image mcp/npm-sentinel (public catalog: npm-sentinel). */
  npmSentinel?: NpmSentinelConfig;
  /** Runs the OCI image mcp/obsidian (public catalog: obsidian). */
  obsidian?: ObsidianConfig;
  /** Runs the OCI image mcp/okta-mcp-server (public catalog: okta-mcp-server). */
  okta?: OktaConfig;
  /** Runs the OCI image mcp/okta-mcp-fctr (public catalog: okta-mcp-fctr). */
  oktaMcpFctr?: OktaMcpFctrConfig;
  /** Runs the OCI image mcp/omi (public catalog: omi). */
  omi?: OmiConfig;
  /** Runs the OCI image mcp/onlyoffice-docspace (public catalog: onlyoffice-docspace). */
  onlyofficeDocspace?: OnlyofficeDocspaceConfig;
  /** Runs the OCI image mcp/openapi (public catalog: openapi). */
  openapi?: OpenapiConfig;
  /** Runs the OCI image mcp/openapi-schema (public catalog: openapi-schema). */
  openapiSchema?: OpenapiSchemaConfig;
  /** Runs the OCI image mcp/openbnb-airbnb (public catalog: openbnb-airbnb). */
  openbnbAirbnb?: OpenbnbAirbnbConfig;
  /** Served over HTTP by its vendor at api.openmesh.dev (public catalog: openmesh). */
  openmesh?: OpenmeshConfig;
  /** Runs the OCI image mcp/openweather (public catalog: openweather). */
  openweather?: OpenweatherConfig;
  /** Served over HTTP by its vendor at mcp.openzeppelin.com (public catalog: openzeppelin-cairo). */
  openzeppelinCairo?: OpenzeppelinCairoConfig;
  /** Served over HTTP by its vendor at mcp.openzeppelin.com (public catalog: openzeppelin-solidity). */
  openzeppelinSolidity?: OpenzeppelinSolidityConfig;
  /** Served over HTTP by its vendor at mcp.openzeppelin.com (public catalog: openzeppelin-stellar). */
  openzeppelinStellar?: OpenzeppelinStellarConfig;
  /** Served over HTTP by its vendor at mcp.openzeppelin.com (public catalog: openzeppelin-stylus). */
  openzeppelinStylus?: OpenzeppelinStylusConfig;
  /** Runs the OCI image mcp/opik (public catalog: opik). */
  opik?: OpikConfig;
  /** Runs the OCI image codygreen719/opine-mcp-server (public catalog: opine-mcp-server). */
  opine?: OpineConfig;
  /** Runs the OCI image mcp/oracle (public catalog: oracle). */
  oracle?: OracleConfig;
  /** Runs the OCI image mcp/osp_marketing_tools (public catalog: osp_marketing_tools). */
  ospMarketingTools?: OspMarketingToolsConfig;
  /** Runs the OCI image mcp/oxylabs (public catalog: oxylabs). */
  oxylabs?: OxylabsConfig;
  /** Runs the OCI image mcp/paper-search (public catalog: paper-search). */
  paperSearch?: PaperSearchConfig;
  /** Runs the OCI image mcp/perplexity-ask (public catalog: perplexity-ask). */
  perplexityAsk?: PerplexityAskConfig;
  /** Runs the OCI image mcp/pia (public catalog: pia). */
  pia?: PiaConfig;
  /** Runs the OCI image mcp/pinecone (public catalog: pinecone). */
  pinecone?: PineconeConfig;
  /** Runs the OCI image mcp/mcp-playwright (public catalog: playwright-mcp-server). */
  playwright?: PlaywrightConfig;
  /** Runs the OCI image mcp/pluggedin-mcp-proxy (public catalog: pluggedin-mcp-proxy). */
  pluggedinMcpProxy?: PluggedinMcpProxyConfig;
  /** Served over HTTP by its vendor at api.polarsignals.com (public catalog: polar-signals). */
  polarSignals?: PolarSignalsConfig;
  /** Runs the OCI image mcp/pomodash (public catalog: pomodash). */
  pomodash?: PomodashConfig;
  /** Runs the OCI image mcp/postman (public catalog: postman). */
  postman?: PostmanConfig;
  /** Runs the OCI image mcp/pref-editor (public catalog: pref-editor). */
  prefEditor?: PrefEditorConfig;
  /** Runs the OCI image ghcr.io/pab1it0/prometheus-mcp-server (public catalog: prometheus). */
  prometheus?: PrometheusConfig;
  /** Runs the OCI image mcp/proxmox (public catalog: proxmox). */
  proxmox?: ProxmoxConfig;
  /** Runs the OCI image mcp/puppeteer (public catalog: puppeteer). */
  puppeteer?: PuppeteerConfig;
  /** Runs the OCI image mcp/mcp-python-refactoring (public catalog: mcp-python-refactoring). */
  pythonRefactoring?: PythonRefactoringConfig;
  /** Runs the OCI image mcp/quantconnect (public catalog: quantconnect). */
  quantconnect?: QuantconnectConfig;
  /** Runs the OCI image mcp/ramparts (public catalog: ramparts). */
  ramparts?: RampartsConfig;
  /** Runs the OCI image mcp/razorpay (public catalog: razorpay). */
  razorpay?: RazorpayConfig;
  /** Runs the OCI image mcp/reddit-mcp (public catalog: mcp-reddit). */
  reddit?: RedditConfig;
  /** Runs the OCI image mcp/redis (public catalog: redis). */
  redis?: RedisConfig;
  /** Runs the OCI image mcp/redis-cloud (public catalog: redis-cloud). */
  redisCloud?: RedisCloudConfig;
  /** Runs the OCI image mcp/ref-tools-mcp (public catalog: ref). */
  ref?: RefConfig;
  /** Served over HTTP by its vendor at mcp.remote-mcp.com (public catalog: remote-mcp). */
  remote?: RemoteConfig;
  /** Runs the OCI image mcp/render (public catalog: render). */
  render?: RenderConfig;
  /** Runs the OCI image mcp/resend (public catalog: resend). */
  resend?: ResendConfig;
  /** Runs the OCI image mcp/risken (public catalog: risken). */
  risken?: RiskenConfig;
  /** Runs the OCI image mcp/ros2 (public catalog: ros2). */
  ros2?: Ros2Config;
  /** Served over HTTP by its vendor at rube.app (public catalog: rube). */
  rube?: RubeConfig;
  /** Runs the OCI image mcp/rust-mcp-filesystem (public catalog: rust-mcp-filesystem). */
  rustMcpFilesystem?: RustMcpFilesystemConfig;
  /** Runs the OCI image mcp/schemacrawler-ai (public catalog: schemacrawler-ai). */
  schemacrawlerAi?: SchemacrawlerAiConfig;
  /** Runs the OCI image mcp/schogini_mcp_image_border (public catalog: schogini-mcp-image-border). */
  schoginiMcpImageBorder?: SchoginiMcpImageBorderConfig;
  /** Runs the OCI image mcp/scrapegraph (public catalog: scrapegraph). */
  scrapegraph?: ScrapegraphConfig;
  /** Runs the OCI image mcp/scrapezy (public catalog: scrapezy). */
  scrapezy?: ScrapezyConfig;
  /** Runs the OCI image mcp/securenote-link-mcp-server (public catalog: securenote-link-mcp-server). */
  securenoteLink?: SecurenoteLinkConfig;
  /** Served over HTTP by its vendor at mcp.semgrep.ai (public catalog: semgrep). */
  semgrep?: SemgrepConfig;
  /** Runs the OCI image mcp/sentry (public catalog: sentry). */
  sentry?: SentryConfig;
  /** Runs the OCI image mcp/sequa (public catalog: sequa). */
  sequa?: SequaConfig;
  /** Reference server for dynamic, reflective problem solving through a revisable sequence of thoughts. */
  sequentialThinking?: SequentialThinkingConfig;
  /** Another name for sequentialThinking. */
  sequentialthinking?: SequentialThinkingConfig;
  /** Served over HTTP by its vendor at ai-assistant.short.io (public catalog: short-io). */
  shortIo?: ShortIoConfig;
  /** Runs the OCI image mayurkakade/mcp-server:latest (public catalog: simplechecklist). */
  simplechecklist?: SimplechecklistConfig;
  /** Runs the OCI image mcp/singlestore (public catalog: singlestore). */
  singlestore?: SinglestoreConfig;
  /** Runs the OCI image mcp/slack (public catalog: slack). */
  slack?: SlackConfig;
  /** Runs the OCI image mcp/smartbear (public catalog: smartbear). */
  smartbear?: SmartbearConfig;
  /** Runs the OCI image mcp/sonarqube (public catalog: sonarqube). */
  sonarqube?: SonarqubeConfig;
  /** Runs the OCI image mcp/sqlite-mcp-server (public catalog: sqlite-mcp-server). */
  sqlite?: SqliteConfig;
  /** Runs the OCI image ghcr.io/stackgenhq/stackgen (public catalog: stackgen). */
  stackgen?: StackgenConfig;
  /** Runs the OCI image mcp/stackhawk (public catalog: stackhawk). */
  stackhawk?: StackhawkConfig;
  /** Runs the OCI image mcp/stripe (public catalog: stripe). */
  stripe?: StripeConfig;
  /** Runs the OCI image ghcr.io/supadata-ai/mcp (public catalog: supadata). */
  supadata?: SupadataConfig;
  /** Runs the OCI image mcp/suzieq-mcp (public catalog: suzieq). */
  suzieq?: SuzieqConfig;
  /** Runs the OCI image ghcr.io/jpicklyk/task-orchestrator (public catalog: task-orchestrator). */
  taskOrchestrator?: TaskOrchestratorConfig;
  /** Runs the OCI image mcp/tavily (public catalog: tavily). */
  tavily?: TavilyConfig;
  /** Runs the OCI image mcp/teamwork (public catalog: teamwork). */
  teamwork?: TeamworkConfig;
  /** Served over HTTP by its vendor at api.telnyx.com (public catalog: telnyx). */
  telnyx?: TelnyxConfig;
  /** Runs the OCI image mcp/temporal (public catalog: temporal). */
  temporal?: TemporalConfig;
  /** Runs the OCI image hashicorp/terraform-mcp-server (public catalog: terraform). */
  terraform?: TerraformConfig;
  /** Runs the OCI image mcp/testkube (public catalog: testkube). */
  testkube?: TestkubeConfig;
  /** Runs the OCI image mcp/text-to-graphql (public catalog: text-to-graphql). */
  textToGraphql?: TextToGraphqlConfig;
  /** Runs the OCI image mcp/thingsboard (public catalog: thingsboard). */
  thingsboard?: ThingsboardConfig;
  /** Runs the OCI image mcp/tigris (public catalog: tigris). */
  tigris?: TigrisConfig;
  /** Runs the OCI image mcp/time (public catalog: time). */
  time?: TimeConfig;
  /** Runs the OCI image mcp/unreal-engine-mcp-server (public catalog: unreal-engine-mcp-server). */
  unrealEngine?: UnrealEngineConfig;
  /** Runs the OCI image mcp/vectra-ai-rux-mcp-server (public catalog: vectra-ai-rux-mcp-server). */
  vectraAiRux?: VectraAiRuxConfig;
  /** Runs the OCI image mcp/veyrax (public catalog: veyrax). */
  veyrax?: VeyraxConfig;
  /** Runs the OCI image ghcr.io/victoriametrics-community/mcp-victorialogs (public catalog: victorialogs). */
  victorialogs?: VictorialogsConfig;
  /** Runs the OCI image ghcr.io/victoriametrics-community/mcp-victoriametrics (public catalog: victoriametrics). */
  victoriametrics?: VictoriametricsConfig;
  /** Runs the OCI image ghcr.io/victoriametrics-community/mcp-victoriatraces (public catalog: victoriatraces). */
  victoriatraces?: VictoriatracesConfig;
  /** Runs the OCI image mcp/vizro (public catalog: vizro). */
  vizro?: VizroConfig;
  /** Runs the OCI image mcp/vuln-nist-mcp-server (public catalog: vuln-nist-mcp-server). */
  vulnNist?: VulnNistConfig;
  /** Served over HTTP by its vendor at app.wayfound.ai (public catalog: wayfound). */
  wayfound?: WayfoundConfig;
  /** Runs the OCI image mcp/webflow (public catalog: webflow). */
  webflow?: WebflowConfig;
  /** Runs the OCI image mcp/wikipedia-mcp (public catalog: wikipedia-mcp). */
  wikipedia?: WikipediaConfig;
  /** Runs the OCI image mcp/wolfram-alpha (public catalog: wolfram-alpha). */
  wolframAlpha?: WolframAlphaConfig;
  /** Runs the OCI image mcp/youtube-transcript (public catalog: youtube_transcript). */
  youtubeTranscript?: YoutubeTranscriptConfig;
  /** Runs the OCI image mcp/zen (public catalog: zen). */
  zen?: ZenConfig;
  /** Runs the OCI image mcp/zerodha-kite (public catalog: zerodha-kite). */
  zerodhaKite?: ZerodhaKiteConfig;
  /** Runs the OCI image mcp/zscaler-mcp-server (public catalog: zscaler-mcp-server). */
  zscaler?: ZscalerConfig;
}
