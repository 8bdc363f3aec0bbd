#!/usr/bin/env node
/**
 * `shardlet` entry: picks a subcommand and hands it argv. Thin by design; each subcommand
 * lives in its own `*-command.ts` module and is imported lazily so `sim-runtime` never loads
 * agent code and vice versa.
 */
const COMMANDS: Readonly<Record<string, { summary: string; load: () => Promise<{ run(argv: string[]): Promise<number> }> }>> = {
  agent: { summary: 'run the node agent', load: () => import('./agent-command.js') },
  hollow: { summary: 'run N hollow nodes (simulated runtimes) in one process', load: () => import('./hollow-command.js') },
  'sim-runtime': { summary: 'run the simulated CRI runtime on a unix socket', load: () => import('./sim-runtime-command.js') },
};

const VERSION_FLAGS: ReadonlySet<string> = new Set(['--version', '-V', 'version']);

function usage(): string {
  const lines = ['usage: shardlet <command> [flags]', '       shardlet --version', '', 'commands:'];
  for (const [name, c] of Object.entries(COMMANDS)) lines.push(`  ${name.padEnd(14)}${c.summary}`);
  lines.push('', 'Run `shardlet <command> --help` for its flags.');
  return lines.join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage() + '\n');
    return name === undefined ? 2 : 0;
  }
  if (VERSION_FLAGS.has(name)) {
    const { packageVersion } = await import('./version.js');
    process.stdout.write(`shardlet ${packageVersion()}\n`);
    return 0;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    process.stderr.write(`shardlet: unknown command ${JSON.stringify(name)}\n\n${usage()}\n`);
    return 2;
  }
  const mod = await cmd.load();
  return mod.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`shardlet: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
