/**
 * `npm test` driver (after `tsc`): prepares what the tests need on this machine, then runs
 * every test file with node's test runner, then the unit tests again under Node 24.
 *
 *   1. `test/harness/prepare.ts` installs (apt, as root, when missing) containerd, runc, CNI
 *      plugins, gcc, busybox-static, Prometheus, and Go with Debian's grpc-go (for the grpc-go
 *      client test). Nothing is skipped for lack of them: a test that needs root fails loudly
 *      when not root.
 *   2. `node --test` over dist/test/**\/*.test.js (one file at a time: 2-core machines, and the
 *      containerd tests each start their own containerd).
 *   3. `npx -y node@24 --test` over dist/test/unit/**; set SHARDLET_SKIP_NODE24=1 to leave it out
 *      locally (CI never sets it).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const distTest = path.dirname(fileURLToPath(import.meta.url));

function findTests(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...findTests(p));
    else if (e.name.endsWith('.test.js')) out.push(p);
  }
  return out.sort();
}

function run(cmd: string, args: string[]): number {
  process.stdout.write(`\n$ ${cmd} ${args.map((a) => path.relative(process.cwd(), a) || a).join(' ')}\n`);
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  return r.status ?? 1;
}

async function main(): Promise<number> {
  const only = process.argv.slice(2);
  const prepare = path.join(distTest, 'harness', 'prepare.js');
  if (fs.existsSync(prepare) && process.env['SHARDLET_SKIP_PREPARE'] !== '1') {
    const code = run(process.execPath, [prepare]);
    if (code !== 0) return code;
  }
  let files = findTests(distTest);
  if (only.length > 0) files = files.filter((f) => only.some((o) => f.includes(o)));
  if (files.length === 0) {
    process.stderr.write('no test files found\n');
    return 1;
  }
  let failed = run(process.execPath, ['--test', '--test-concurrency=1', ...files]) !== 0;
  const unit = files.filter((f) => f.includes(`${path.sep}unit${path.sep}`));
  if (unit.length > 0 && process.env['SHARDLET_SKIP_NODE24'] !== '1') {
    failed = run('npx', ['-y', 'node@24', '--test', '--test-concurrency=1', ...unit]) !== 0 || failed;
  }
  return failed ? 1 : 0;
}

main().then((c) => process.exit(c), (e: unknown) => {
  process.stderr.write(String(e) + '\n');
  process.exit(1);
});
