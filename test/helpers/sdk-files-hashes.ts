/**
 * Runs in a plain Node process (see node-script.ts): the unmodified E2B SDK's files hash of each COPY, as its
 * `Template` builder computes it before an upload. Prints {hashes: [...]}.
 */
import { Template } from 'e2b';

interface Input {
  context: string;
  copies: Array<{ src: string; dest: string }>;
}

const input = JSON.parse(process.argv[2]!) as Input;

async function main(): Promise<void> {
  let t = Template({ fileContextPath: input.context }).fromDebianImage('bookworm');
  for (const c of input.copies) t = t.copy(c.src, c.dest);
  // The builder's own step that adds each COPY's filesHash (what Template.build sends and uploads under).
  const steps = (
    await (t as unknown as { instructionsWithHashes(): Promise<Array<{ type: string; filesHash?: string }>> }).instructionsWithHashes()
  )
    .filter((s) => s.type === 'COPY')
    .map((s) => s.filesHash);
  process.stdout.write(`${JSON.stringify({ hashes: steps })}\n`);
}

main().catch((err: Error) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
