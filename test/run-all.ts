/**
 * `npm test` driver (after `tsc`): prepares what the tests need on this machine, then runs
 * every test file with node's test runner, then the unit tests again under Node 24.
 *
 *   1. `test/harness/prepare.ts` installs (apt, as root, when missing) containerd, runc, CNI
 *      plugins, gcc, busybox-static, Prometheus, and Go with Debian's grpc-go (for the grpc-go
 *      client test). Nothing is skipped for lack of them: a test that needs root fails loudly
 *      when not root.
 *   2. Long tests — every test file under dist/test/e2e-long/ — are long and mostly idle
 *      (e.g. waiting 8 minutes for a real token refresh). They are started FIRST, in their own
 *      `node --test` process (one file at a time among themselves), and run CONCURRENTLY with
 *      step 3, so they add nothing to the wall time as long as they are shorter than it. Their
 *      output goes to a temp file and is printed after step 3; their failure fails the run.
 *      They must only use harness resources that are safe to share with a concurrent run:
 *      the control-plane harness (owned port slots, own /dev/shm dir), the sim-runtime harness
 *      (own socket dir), agents with their own --root-dir and a free read-only port.
 *   3. `node --test` over every other dist/test/**\/*.test.js (one file at a time: 2-core
 *      machines, and the containerd tests each start their own containerd).
 *   4. `npx -y node@24 --test` over dist/test/unit/**; set SHARDLET_SKIP_NODE24=1 to leave it out
 *      locally (CI never sets it).
 * Arguments filter test files by substring of their path (long ones included when they match).
 * A long run still going LONG_RUN_GRACE_MS after step 3 ended is killed and fails the run
 * (each long test has its own node:test timeout well below that).
 * Every `node --test` run gets `--test-timeout` (TEST_TIMEOUT_MS): a test or a hook that never
 * ends (an after() awaiting a promise nobody resolves) fails its file after that long instead of
 * hanging the run until CI's limit. It is above what any test without its own `timeout` option
 * takes; a test or hook with one keeps it (the long token-refresh test has 15 and 30 min).
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const distTest = path.dirname(fileURLToPath(import.meta.url));
const LONG_DIR = `${path.sep}e2e-long${path.sep}`;
const LONG_RUN_GRACE_MS = 20 * 60_000;
const TEST_TIMEOUT_MS = 10 * 60_000;
const TEST_FLAGS = ['--test', '--test-concurrency=1', `--test-timeout=${TEST_TIMEOUT_MS}`];

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

function commandLine(cmd: string, args: string[]): string {
  return `$ ${cmd} ${args.map((a) => path.relative(process.cwd(), a) || a).join(' ')}`;
}

function run(cmd: string, args: string[]): number {
  process.stdout.write(`\n${commandLine(cmd, args)}\n`);
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  return r.status ?? 1;
}

interface BackgroundRun {
  /** Resolves with the exit code once the process ended (killed after `graceMs` from the call: 1). */
  finish(graceMs: number): Promise<number>;
  /** The run's output so far (stdout and stderr interleaved, as written). */
  output(): string;
  remove(): void;
}

/**
 * Starts a command whose output goes to a temp file, not a pipe: the main run blocks this
 * process's event loop in spawnSync, and a pipe nobody reads would stall the child once full.
 */
function startBackground(cmd: string, args: string[]): BackgroundRun {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-long-tests-'));
  const logPath = path.join(dir, 'output.txt');
  const fd = fs.openSync(logPath, 'w');
  const child = spawn(cmd, args, { stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  const exited = new Promise<number>((resolve) => {
    child.once('exit', (code, sig) => resolve(code ?? (sig ? 1 : 1)));
    child.once('error', () => resolve(1));
  });
  return {
    async finish(graceMs: number): Promise<number> {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), graceMs)));
      const first = await Promise.race([exited, timedOut]);
      clearTimeout(timer);
      if (first !== 'timeout') return first;
      fs.appendFileSync(logPath, `\nrun-all: long tests still running ${graceMs} ms after the main run: killed\n`);
      child.kill('SIGKILL');
      await exited;
      return 1;
    },
    output: () => fs.readFileSync(logPath, 'utf8'),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
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
  const long = files.filter((f) => f.includes(LONG_DIR));
  const main = files.filter((f) => !f.includes(LONG_DIR));
  const longArgs = [...TEST_FLAGS, ...long];
  let background: BackgroundRun | undefined;
  if (long.length > 0) {
    process.stdout.write(`\n${commandLine(process.execPath, longArgs)} (in the background; output below when it ends)\n`);
    background = startBackground(process.execPath, longArgs);
  }
  let failed = main.length > 0 ? run(process.execPath, [...TEST_FLAGS, ...main]) !== 0 : false;
  if (background) {
    const code = await background.finish(LONG_RUN_GRACE_MS);
    process.stdout.write(`\n${commandLine(process.execPath, longArgs)} (ran concurrently; exit ${code})\n${background.output()}`);
    background.remove();
    failed = code !== 0 || failed;
  }
  const unit = files.filter((f) => f.includes(`${path.sep}unit${path.sep}`));
  if (unit.length > 0 && process.env['SHARDLET_SKIP_NODE24'] !== '1') {
    failed = run('npx', ['-y', 'node@24', ...TEST_FLAGS, ...unit]) !== 0 || failed;
  }
  return failed ? 1 : 0;
}

main().then((c) => process.exit(c), (e: unknown) => {
  process.stderr.write(String(e) + '\n');
  process.exit(1);
});
