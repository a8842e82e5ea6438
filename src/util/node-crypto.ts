/**
 * node:crypto, loaded on first use. Loading it builds every crypto module of node at once, about 12 ms of a
 * sandbox's start, and the agent starts and checks its token without it (contract/access-token.ts): only the parts
 * that need a hash or random bytes (signed URLs, uploads, watches) load it, when first used.
 */
let loaded: typeof import('node:crypto') | undefined;

export function nodeCrypto(): typeof import('node:crypto') {
  loaded ??= require('node:crypto') as typeof import('node:crypto');
  return loaded;
}
