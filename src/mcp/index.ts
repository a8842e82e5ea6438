/** Tool servers (MCP): the catalog, config validation, and the in-sandbox gateway. */
export { builtinCatalog, CATALOG_FILE_ENV, CatalogError, loadCatalog, parseCatalog, readCatalogFile } from './catalog/load';
export type { Catalog, CatalogEntry, CatalogProperty, PropertyType } from './catalog/schema';
export {
  type CustomServer,
  type McpConfig,
  McpConfigError,
  type McpConfigIssue,
  formatMcpIssues,
  parseMcpConfig,
  validateMcpConfig,
  type ValidMcpConfig,
} from './config/validate';
export type { McpServers } from './generated/servers';
export { startMcpGateway, type GatewayOptions, type RunningGateway } from './gateway/server';
export { runMcpGateway } from './gateway/cli';
