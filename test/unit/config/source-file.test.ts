import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createFileSource, RACY_MS, READ_CONCURRENCY, type FileSourceImpl } from '../../../src/main/config/source-file.js';
import { PodConfig } from '../../../src/main/config/pod-config.js';
import type { PodUpdate } from '../../../src/shared/manifest/pod-update.js';
import type { ConfigError } from '../../../src/shared/manifest/config-errors.js';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { realClock, type Clock } from '../../../src/shared/clock/clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { within } from '../../harness/poll.js';
import { inlineManifestDecoder, type ManifestDecoder } from '../../../src/shared/manifest/manifest-decoder.js';

/** The inline decoder, telling `onRead` of every file it is asked to read (the source's reads). */
function readingDecoder(onRead: (file: string) => void): ManifestDecoder {
  return { ...inlineManifestDecoder, decodeFile: (req) => (onRead(req.file), inlineManifestDecoder.decodeFile(req)) };
}

const manifest = (name: string, image = 'nginx:1'): string =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  containers:\n  - name: app\n    image: ${image}\n`;

interface Rig {
  dir: string;
  cfg: PodConfig;
  src: FileSourceImpl;
  errors: ConfigError[];
  /** Resolves with the next update the merger emits (an event, not a timer). */
  nextUpdate(): Promise<PodUpdate>;
  close(): Promise<void>;
}

async function rig(opts: { clock: Clock; watch: boolean }): Promise<Rig> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'shardlet-file-src-'));
  const cfg = new PodConfig({ clock: opts.clock, logger: silentLogger });
  const errors: ConfigError[] = [];
  const src = createFileSource({ path: dir, nodeName: 'n1', sink: cfg.channel('file'), clock: opts.clock, logger: silentLogger, onError: (e) => errors.push(e), watch: opts.watch });
  return {
    dir,
    cfg,
    src,
    errors,
    nextUpdate: async () => {
      const u = await cfg.next();
      assert.ok(u, 'merger closed');
      return u;
    },
    close: async () => {
      await src.close();
      cfg.close();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

const summary = (u: PodUpdate): string => `${u.op}:${u.pods.map((p) => p.metadata?.name).join(',')}`;

test('write → ADD; edit → REMOVE old + ADD new; break it → nothing removed, error names file and field; delete → REMOVE', async () => {
  const r = await rig({ clock: new FakeClock(), watch: false });
  try {
    await fs.writeFile(path.join(r.dir, 'web.yaml'), manifest('web'));
    await fs.writeFile(path.join(r.dir, '.hidden.yaml'), manifest('hidden'));
    await fs.writeFile(path.join(r.dir, 'notes.txt'), 'not a manifest');
    await r.src.syncNow();
    assert.equal(r.cfg.sourcesReady(), true);
    const add = await r.nextUpdate();
    assert.equal(summary(add), 'ADD:web-n1');
    const oldUid = add.pods[0]?.metadata?.uid;

    await fs.writeFile(path.join(r.dir, 'web.yaml'), manifest('web', 'nginx:2'));
    await r.src.syncNow();
    const rm = await r.nextUpdate();
    const add2 = await r.nextUpdate();
    assert.deepEqual([summary(rm), summary(add2)], ['REMOVE:web-n1', 'ADD:web-n1']);
    assert.equal(rm.pods[0]?.metadata?.uid, oldUid);
    assert.notEqual(add2.pods[0]?.metadata?.uid, oldUid);

    await fs.writeFile(path.join(r.dir, 'web.yaml'), `${manifest('web', 'nginx:3')}  - imagePullPolicy: Always\n`);
    await r.src.syncNow();
    assert.equal(r.cfg.queued, 0, 'an invalid edit removes nothing');
    assert.equal(r.errors.length, 1);
    assert.equal(r.errors[0]?.code, 'ERR_MANIFEST_INVALID');
    assert.equal(r.errors[0]?.message, `${path.join(r.dir, 'web.yaml')}: spec.containers[1].name: Required value; spec.containers[1].image: Required value`);
    await r.src.syncNow();
    assert.equal(r.errors.length, 1, 'the same problem is reported once');
    assert.deepEqual(r.cfg.mergedState().map((p) => p.spec?.containers[0]?.image), ['nginx:2'], 'the last valid version keeps running');

    await fs.rm(path.join(r.dir, 'web.yaml'));
    await r.src.syncNow();
    assert.equal(summary(await r.nextUpdate()), 'REMOVE:web-n1');
  } finally {
    await r.close();
  }
});

test('two files defining the same pod: the first keeps it, the later file is rejected; removing the first hands over', async () => {
  const r = await rig({ clock: new FakeClock(), watch: false });
  try {
    await fs.writeFile(path.join(r.dir, 'b.yaml'), manifest('web', 'from-b:1'));
    await r.src.syncNow();
    assert.equal(summary(await r.nextUpdate()), 'ADD:web-n1');
    // a.yaml sorts first, but b.yaml already owns the name: the running pod is not disturbed
    await fs.writeFile(path.join(r.dir, 'a.yaml'), manifest('web', 'from-a:1'));
    await fs.writeFile(path.join(r.dir, 'c.json'), JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'api' }, spec: { containers: [{ name: 'c', image: 'x:1' }] } }));
    await r.src.syncNow();
    assert.equal(summary(await r.nextUpdate()), 'ADD:api-n1');
    assert.equal(r.cfg.queued, 0);
    assert.equal(r.errors.length, 1);
    assert.equal(r.errors[0]?.code, 'ERR_MANIFEST_DUPLICATE');
    assert.equal(r.errors[0]?.origin, path.join(r.dir, 'a.yaml'));
    assert.match(r.errors[0]?.message ?? '', /metadata\.name: Duplicate value: "web-n1": pod default\/web-n1 is already defined by .*b\.yaml/);

    await fs.rm(path.join(r.dir, 'b.yaml'));
    await r.src.syncNow();
    const rm = await r.nextUpdate();
    const add = await r.nextUpdate();
    assert.deepEqual([summary(rm), summary(add)], ['REMOVE:web-n1', 'ADD:web-n1']);
    assert.equal(add.pods[0]?.spec?.containers[0]?.image, 'from-a:1');
  } finally {
    await r.close();
  }
});

test('a file that never was valid contributes nothing and does not disturb the others; a missing path is an empty SET', async () => {
  const r = await rig({ clock: new FakeClock(), watch: false });
  try {
    await fs.writeFile(path.join(r.dir, 'bad.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata: {name: x\n');
    await fs.writeFile(path.join(r.dir, 'good.yml'), manifest('good'));
    await r.src.syncNow();
    assert.equal(summary(await r.nextUpdate()), 'ADD:good-n1');
    assert.equal(r.errors[0]?.code, 'ERR_MANIFEST_PARSE');
    assert.match(r.errors[0]?.message ?? '', /bad\.yaml: yaml: line \d+: /);
  } finally {
    await r.close();
  }
  const cfg = new PodConfig({ clock: new FakeClock(), logger: silentLogger });
  const src = createFileSource({ path: '/nonexistent/shardlet-manifests', nodeName: 'n1', sink: cfg.channel('file'), clock: new FakeClock(), logger: silentLogger, watch: false });
  await src.syncNow();
  assert.equal(cfg.sourcesReady(), true);
  assert.deepEqual((await cfg.next())?.pods, []);
  await src.close();
});

test('periodic resync on the injected clock picks up changes without fs.watch', async () => {
  const clock = new FakeClock();
  const r = await rig({ clock, watch: false });
  try {
    r.src.start();
    assert.deepEqual((await r.nextUpdate()).pods, []); // first SET: empty, source ready
    await fs.writeFile(path.join(r.dir, 'late.yaml'), manifest('late'));
    clock.step(19_999);
    assert.equal(r.cfg.queued, 0);
    clock.step(1);
    assert.equal(summary(await r.nextUpdate()), 'ADD:late-n1');
  } finally {
    await r.close();
  }
});

test('full resync: a file whose stat is unchanged since its last decode is not read again; a changed or racy one is', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'shardlet-file-stamp-'));
  // The injected wall clock runs a minute ahead of the files' real timestamps: written files
  // look settled (older than RACY_MS) to the source.
  const clock = new FakeClock(Date.now() + 60_000);
  const cfg = new PodConfig({ clock, logger: silentLogger });
  const reads: string[] = [];
  const decoder = readingDecoder((file) => void reads.push(path.basename(file)));
  const src = createFileSource({ path: dir, nodeName: 'n1', sink: cfg.channel('file'), clock, logger: silentLogger, watch: false, decoder });
  const read = (): string => reads.splice(0).sort().join(',');
  try {
    await fs.writeFile(path.join(dir, 'a.yaml'), manifest('a'));
    await fs.writeFile(path.join(dir, 'b.yaml'), manifest('b'));
    src.start();
    await src.syncNow();
    assert.equal(read(), 'a.yaml,b.yaml');
    await src.syncNow();
    assert.equal(read(), '', 'unchanged files were read again');
    // Same size, new content: mtime/ctime move, the file is read and the change delivered.
    await fs.writeFile(path.join(dir, 'a.yaml'), manifest('a', 'nginx:2'));
    await src.syncNow();
    assert.equal(read(), 'a.yaml');
    const images: (string | undefined)[] = [];
    for (let u = cfg.tryNext(); u !== undefined; u = cfg.tryNext()) images.push(...u.pods.map((p) => p.spec?.containers[0]?.image));
    assert.ok(images.includes('nginx:2'), `the change reached the pod config: ${JSON.stringify(images)}`);
    // Replaced by rename (a new inode): read again.
    await fs.writeFile(path.join(dir, '.tmp'), manifest('b'));
    await fs.rename(path.join(dir, '.tmp'), path.join(dir, 'b.yaml'));
    await src.syncNow();
    assert.equal(read(), 'b.yaml');
    // A file deleted and re-created is read again.
    await fs.rm(path.join(dir, 'a.yaml'));
    await src.syncNow();
    await fs.writeFile(path.join(dir, 'a.yaml'), manifest('a', 'nginx:2'));
    await src.syncNow();
    assert.equal(read(), 'a.yaml');
  } finally {
    await src.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test('full resync: a file changed within RACY_MS of its read is read again at the next resync', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'shardlet-file-racy-'));
  await fs.writeFile(path.join(dir, 'a.yaml'), manifest('a'));
  // The wall clock at the file's own last change, read from its stat (not Date.now(), which the
  // file's timestamp may follow by a millisecond or more): a file just written is "racy".
  const st = await fs.stat(path.join(dir, 'a.yaml'));
  const clock = new FakeClock(Math.max(st.mtimeMs, st.ctimeMs));
  const cfg = new PodConfig({ clock, logger: silentLogger });
  let reads = 0;
  const src = createFileSource({ path: dir, nodeName: 'n1', sink: cfg.channel('file'), clock, logger: silentLogger, watch: false, decoder: readingDecoder(() => void reads++) });
  try {
    src.start();
    await src.syncNow();
    await src.syncNow();
    assert.equal(reads, 3, 'a racy file must be read at every resync until it has settled');
    // Once the file is older than RACY_MS at a read, the next resync trusts its stamp.
    clock.stepWall(RACY_MS);
    await src.syncNow();
    assert.equal(reads, 4);
    await src.syncNow();
    assert.equal(reads, 4);
  } finally {
    await src.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test('files named by fs.watch are read READ_CONCURRENCY at a time, not one after another', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'shardlet-file-many-'));
  const clock = new FakeClock(Date.now() + 60_000);
  const cfg = new PodConfig({ clock, logger: silentLogger });
  // Once gated, every read waits until READ_CONCURRENCY reads are in flight together: reads made
  // one at a time never get there, and the bounded wait below fails.
  let gated = false;
  let inFlight = 0;
  let maxInFlight = 0;
  let open!: () => void;
  const together = new Promise<void>((resolve) => (open = resolve));
  const decoder: ManifestDecoder = {
    ...inlineManifestDecoder,
    decodeFile: async (req) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        if (gated) {
          if (inFlight >= READ_CONCURRENCY) open();
          await together;
        }
        return await inlineManifestDecoder.decodeFile(req);
      } finally {
        inFlight--;
      }
    },
  };
  const debounceMs = 50;
  const src = createFileSource({ path: dir, nodeName: 'n1', sink: cfg.channel('file'), clock, logger: silentLogger, watch: false, decoder, debounceMs });
  try {
    src.start();
    await src.syncNow();
    while (cfg.tryNext() !== undefined);
    const names = Array.from({ length: 3 * READ_CONCURRENCY }, (_, i) => `p${i}.yaml`);
    for (const n of names) await fs.writeFile(path.join(dir, n), manifest(n.replace('.yaml', '')));
    gated = true;
    for (const n of names) src.noteChanged(n);
    clock.step(debounceMs);
    await within(together, `${READ_CONCURRENCY} reads in flight together (at most ${maxInFlight} were)`);
    const u = await within(cfg.next(), 'the update with the named files\' pods');
    assert.equal(u?.op, 'ADD');
    assert.equal(u?.pods.length, names.length);
    assert.equal(maxInFlight, READ_CONCURRENCY, 'never more reads in flight than the bound');
  } finally {
    await src.close();
    cfg.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

// Timing targets (a change reaches the consumer within 100 ms) are measured, not asserted, here:
// unit tests carry no speed targets. This test asserts that fs.watch alone (resync is 20 s on a
// real clock) delivers the changes, in order.
test('fs.watch delivers changes without waiting for the resync, a burst of files included', async (t) => {
  const r = await rig({ clock: realClock, watch: true });
  try {
    r.src.start();
    await r.nextUpdate(); // initial empty SET
    // dot-file then rename, like tools (and the bench) that write atomically
    const t0 = performance.now();
    await fs.writeFile(path.join(r.dir, '.web.yaml.tmp'), manifest('web'));
    await fs.rename(path.join(r.dir, '.web.yaml.tmp'), path.join(r.dir, 'web.yaml'));
    const u = await r.nextUpdate();
    t.diagnostic(`watch → consumer latency ${(performance.now() - t0).toFixed(1)} ms`);
    assert.equal(summary(u), 'ADD:web-n1');

    await Promise.all(Array.from({ length: 50 }, (_, i) => fs.writeFile(path.join(r.dir, `p${i}.json`), JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `p${i}` }, spec: { containers: [{ name: 'c', image: 'x:1' }] } }))));
    let added = 0;
    let updates = 0;
    while (added < 50) {
      const x = await r.nextUpdate();
      assert.equal(x.op, 'ADD');
      added += x.pods.length;
      updates++;
    }
    assert.equal(added, 50);
    t.diagnostic(`50 files arrived in ${updates} ADD updates`);

    await fs.rm(path.join(r.dir, 'web.yaml'));
    assert.equal(summary(await r.nextUpdate()), 'REMOVE:web-n1');
  } finally {
    await r.close();
  }
});
