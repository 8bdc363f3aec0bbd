/**
 * CPU of one periodic full re-read of the static-pod directory (the file source's resync,
 * every --file-check-frequency, 20 s by default) at N manifest files that did not change: what
 * an idle dense node pays for its static pods. The file source runs in this process as the
 * agent runs it (inline decoder); only this process's CPU (process.cpuUsage) counts, libuv's
 * file-system threads included.
 *
 *   node dist/bench/file-source-resync.js [--files N] [--rounds R]
 *
 * The files are written, then left alone for RACY_MS + 0.5 s so that they have settled the way
 * files on a node have (source-file.ts: a file changed within RACY_MS of a read is read again).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createFileSource, RACY_MS } from '../src/main/config/source-file.js';
import { realClock } from '../src/shared/clock/clock.js';
import { createLogger } from '../src/shared/logging/logger.js';
import { intFlag } from './int-flag.js';

const USAGE = `usage: node dist/bench/file-source-resync.js [--files N] [--rounds R]
  --files N   manifest files (default 1000, 1–20000)
  --rounds R  resyncs measured (default 5, 1–100)`;

function manifest(i: number): string {
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: static-${i}\n  namespace: bench\nspec:\n  containers:\n  - name: c\n    image: busybox:1.36\n    command: ["sleep", "3600"]\n    resources:\n      requests:\n        cpu: 10m\n        memory: 16Mi\n`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { files: { type: 'string' }, rounds: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help === true) {
    console.log(USAGE);
    return;
  }
  const files = intFlag(values.files, 'files', 1000, 1, 20_000, USAGE);
  const rounds = intFlag(values.rounds, 'rounds', 5, 1, 100, USAGE);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'shardlet-resync-bench-'));
  try {
    for (let i = 0; i < files; i++) await fs.writeFile(path.join(dir, `static-${i}.yaml`), manifest(i));
    await realClock.sleep(RACY_MS + 500);
    let pods = 0;
    const src = createFileSource({ path: dir, nodeName: 'bench-node', sink: { set: (p) => void (pods = p.length) }, clock: realClock, logger: createLogger({ verbosity: 0 }), watch: false });
    src.start();
    await src.syncNow();
    if (pods !== files) throw new Error(`expected ${files} pods from the first read, got ${pods}`);
    for (let r = 1; r <= rounds; r++) {
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      await src.syncNow();
      const cpu = process.cpuUsage(cpu0);
      console.log(`resync ${r}: ${files} files, ${((cpu.user + cpu.system) / 1000).toFixed(1)} ms CPU, ${(performance.now() - t0).toFixed(1)} ms wall`);
    }
    await src.close();
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
});
