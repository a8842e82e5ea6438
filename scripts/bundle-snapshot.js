/**
 * The script the bundle step builds the agent's V8 startup snapshot from (src/runtime/agent-snapshot.ts says why):
 * `node <flags> --snapshot-blob agent.snapshot --build-snapshot bundle-snapshot.js`. It adds nothing to the heap; the
 * snapshot's worth is the code cache of node's built-in modules made under those flags. Started from the snapshot,
 * `node <flags> --snapshot-blob agent.snapshot FILE args...` runs FILE as its main module, as `node FILE args...`
 * would. Kept plain JavaScript, and it may require only node's built-in modules (the snapshot builder's rule).
 */
const v8 = require('node:v8');

v8.startupSnapshot.setDeserializeMainFunction(() => {
  const file = process.argv[1];
  if (file === undefined) {
    console.error('usage: node --snapshot-blob BLOB FILE [args...]');
    process.exit(2);
  }
  // node resolves its main script's path before it runs it; a snapshot's main function is handed argv as typed.
  process.argv[1] = require('node:path').resolve(file);
  require('node:module').runMain();
});
