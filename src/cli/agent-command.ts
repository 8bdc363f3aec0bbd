/** Placeholder until the agent command lands. */
export async function run(_argv: string[]): Promise<number> {
  process.stderr.write('shardlet agent: not built yet\n');
  return 1;
}
