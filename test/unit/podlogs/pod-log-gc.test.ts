/**
 * The pod log GC on a real directory: only directories of pods that are gone and old enough go;
 * symlinks, files and foreign names are never touched; passes are bounded, periodic, single
 * flight, and a failed removal is retried at the next pass. Synchronised on each pass's promise.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { PodLogGc, podUIDOfLogDir, type PodLogGcDeps } from '../../../src/main/podlogs/pod-log-gc.js';

const MIN = 60_000;

function setup(t: { after(fn: () => void): void }, over: Partial<PodLogGcDeps> = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'podlog-gc-'));
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'podlog-gc-outside-'));
  t.after(() => {
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });
  const clock = new FakeClock(Date.now());
  const known = new Set<string>();
  let ready = true;
  const gc = new PodLogGc({ clock, logger: silentLogger, podLogsDir: root, isPodKnown: (u) => known.has(u), sourcesReady: () => ready, ...over });
  /** A pod log directory with one log file, last modified `ageMs` before the fake now. */
  const mk = (name: string, ageMs = 2 * MIN): string => {
    const d = path.join(root, name);
    fs.mkdirSync(path.join(d, 'app'), { recursive: true });
    fs.writeFileSync(path.join(d, 'app', '0.log'), 'x\n');
    const t = (clock.now() - ageMs) / 1000;
    fs.utimesSync(d, t, t);
    return d;
  };
  return { root, outside, clock, known, gc, mk, setReady: (v: boolean) => (ready = v) };
}

test('removes only old directories of pods that are gone; never symlinks, files or foreign names', async (t) => {
  const { root, outside, known, gc, mk } = setup(t);
  const gone = mk('default_web_uid-gone');
  const alive = mk('default_api_uid-alive');
  const fresh = mk('default_new_uid-fresh', 10_000);
  const foreign = mk('not-a-pod-dir');
  const extra = mk('a_b_c_d');
  known.add('uid-alive');
  fs.writeFileSync(path.join(outside, 'precious'), 'keep');
  fs.symlinkSync(outside, path.join(root, 'default_link_uid-link'));
  fs.writeFileSync(path.join(root, 'default_file_uid-file'), 'a file');
  const r = await gc.maybeRun();
  assert.deepEqual(r, { scanned: 7, removed: 1, failed: 0 });
  assert.equal(fs.existsSync(gone), false);
  for (const d of [alive, fresh, foreign, extra]) assert.ok(fs.existsSync(d), d);
  assert.equal(fs.readFileSync(path.join(outside, 'precious'), 'utf8'), 'keep', 'a symlink is never followed');
  assert.ok(fs.lstatSync(path.join(root, 'default_link_uid-link')).isSymbolicLink());
  assert.ok(fs.existsSync(path.join(root, 'default_file_uid-file')));
});

test('one pass per period, none before the sources are ready, one in flight; bounded removals; failures retried next pass', async (t) => {
  let failures = 1;
  const removed: string[] = [];
  const { clock, gc, mk, setReady } = setup(t, {
    maxRemovals: 3,
    remove: async (dir) => {
      if (failures-- > 0) throw Object.assign(new Error(`EBUSY: rm '${dir}'`), { code: 'EBUSY' });
      removed.push(path.basename(dir));
      fs.rmSync(dir, { recursive: true });
    },
  });
  for (let i = 0; i < 5; i++) mk(`ns_p${i}_uid-${i}`);
  setReady(false);
  assert.equal(gc.maybeRun(), undefined, 'nothing before every source has delivered');
  setReady(true);
  const first = gc.maybeRun();
  assert.ok(first);
  assert.equal(gc.maybeRun(), undefined, 'one pass in flight');
  assert.deepEqual(await first, { scanned: 3, removed: 2, failed: 1 }, 'at most 3 removals (or attempts) per pass');
  assert.equal(gc.maybeRun(), undefined, 'not again within the period');
  clock.step(MIN);
  const second = await gc.maybeRun();
  assert.deepEqual(second, { scanned: 3, removed: 3, failed: 0 }, 'the failed one and the rest');
  assert.equal(removed.length, 5);
  clock.step(MIN);
  assert.deepEqual(await gc.maybeRun(), { scanned: 0, removed: 0, failed: 0 });
});

test('a missing pod logs directory is not an error; names parse as <namespace>_<name>_<uid> only', async (t) => {
  const { root, gc } = setup(t);
  fs.rmSync(root, { recursive: true });
  assert.deepEqual(await gc.maybeRun(), { scanned: 0, removed: 0, failed: 0 });
  assert.equal(podUIDOfLogDir('ns_name_uid'), 'uid');
  for (const bad of ['ns_name', 'a_b_c_d', '_name_uid', 'ns__uid', 'ns_name_', 'ns_.._uid', '..']) assert.equal(podUIDOfLogDir(bad), undefined, bad);
});
