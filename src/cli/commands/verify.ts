// Placeholder until this command's issue lands; replaced by its real implementation.
export async function run(_argv: string[]): Promise<number> {
  console.error('sandbox-kit verify: not available yet');
  return 1;
}
