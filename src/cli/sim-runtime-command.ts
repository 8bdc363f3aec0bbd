/** Placeholder until the sim-runtime command lands. */
export async function run(_argv: string[]): Promise<number> {
  process.stderr.write('shardlet sim-runtime: not built yet\n');
  return 1;
}
