import { ApiError } from '../http/types';
import type { Catalog } from '../../mcp/catalog/schema';
import { formatMcpIssues, validateMcpConfig, type ValidMcpConfig } from '../../mcp/config/validate';

/**
 * For POST /v2/sandboxes: the `mcp` field of the body, validated before anything is made. Absent means no MCP.
 * A bad config is a 400 whose message names every server and key at fault (secret values never shown).
 */
export function checkSandboxMcp(mcp: unknown, catalog?: Catalog): ValidMcpConfig | undefined {
  if (mcp === undefined || mcp === null) return undefined;
  const result = validateMcpConfig(mcp, catalog);
  if (!result.ok) throw new ApiError(400, formatMcpIssues(result.issues));
  return result.config;
}
