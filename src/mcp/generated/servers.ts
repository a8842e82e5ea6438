// Generated from templates/mcp/catalog.json by scripts/codegen-mcp.ts: do not edit; run the codegen after changing the catalog.

/** Reference server that exercises every MCP feature: echo, add, long-running operations, sampling, resources and prompts. */
export type EverythingConfig = Record<string, never>;

/** Reference server for reading, writing, searching and editing files inside the allowed directories only. */
export interface FilesystemConfig {
  /** Directories the server may access; anything outside them is refused. */
  paths: string[];
}

/** Reference server keeping a knowledge graph of entities, relations and observations in a JSONL file. */
export interface MemoryConfig {
  /** Path of the JSONL file the graph is stored in (default: memory.jsonl beside the server). */
  memoryFilePath?: string;
}

/** Reference server for dynamic, reflective problem solving through a revisable sequence of thoughts. */
export interface SequentialThinkingConfig {
  /** Do not print each thought to the server's stderr. */
  disableThoughtLogging?: boolean;
}

/** Every catalog server, by name: the `mcp` option of a sandbox or template. */
export interface McpServers {
  /** Reference server that exercises every MCP feature: echo, add, long-running operations, sampling, resources and prompts. */
  everything?: EverythingConfig;
  /** Reference server for reading, writing, searching and editing files inside the allowed directories only. */
  filesystem?: FilesystemConfig;
  /** Reference server keeping a knowledge graph of entities, relations and observations in a JSONL file. */
  memory?: MemoryConfig;
  /** Reference server for dynamic, reflective problem solving through a revisable sequence of thoughts. */
  sequentialThinking?: SequentialThinkingConfig;
  /** Another name for sequentialThinking. */
  sequentialthinking?: SequentialThinkingConfig;
}
