import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { SimulatedRuntime } from '../../../src/simruntime/simulated-runtime.js';

/**
 * The state file holds container env (secrets included): it is written 0600 in a 0700
 * directory, whatever the umask, and a file or directory left with wider modes by an older
 * version is tightened on the next save.
 */
const mode = (p: string): number => fs.statSync(p).mode & 0o777;

test('sim state file: written 0600 in a 0700 directory it creates, whatever the umask', async () => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'simrt-mode-'));
  const old = process.umask(0o022);
  try {
    const statePath = path.join(base, 'state', 'sim.json');
    const rt = await SimulatedRuntime.start({ socketPath: path.join(base, 'a.sock'), clock: new FakeClock(), statePath, stateSaveIntervalMs: 0 });
    rt.saveState();
    await rt.close();
    assert.equal(mode(statePath).toString(8), '600');
    assert.equal(mode(path.dirname(statePath)).toString(8), '700');
  } finally {
    process.umask(old);
    fs.rmSync(base, { recursive: true, force: true });
  }
});

test('sim state file: an existing 0644 file in a 0755 directory is tightened on save and on load', async () => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'simrt-mode-'));
  try {
    const dir = path.join(base, 'state');
    fs.mkdirSync(dir, { mode: 0o755 });
    fs.chmodSync(dir, 0o755);
    const statePath = path.join(dir, 'sim.json');
    fs.writeFileSync(statePath, JSON.stringify({ version: 1, savedAtMs: 0, ipCursor: 0, images: [], sandboxes: [], containers: [] }));
    fs.chmodSync(statePath, 0o644);
    const rt = await SimulatedRuntime.start({ socketPath: path.join(base, 'a.sock'), clock: new FakeClock(), statePath, stateSaveIntervalMs: 0 });
    try {
      // Loading already fixed both: the secrets were readable until now.
      assert.equal(mode(statePath).toString(8), '600');
      assert.equal(mode(dir).toString(8), '700');
      fs.chmodSync(statePath, 0o644);
      fs.chmodSync(dir, 0o755);
      rt.saveState();
      assert.equal(mode(statePath).toString(8), '600');
      assert.equal(mode(dir).toString(8), '700');
    } finally {
      await rt.close();
    }
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
});

test('sim state file: a leftover temp file with a wide mode does not leak its mode into the state file', async () => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'simrt-mode-'));
  try {
    const statePath = path.join(base, 'd', 'sim.json');
    fs.mkdirSync(path.dirname(statePath), { mode: 0o700 });
    const tmp = `${statePath}.tmp-${process.pid}`;
    fs.writeFileSync(tmp, 'junk');
    fs.chmodSync(tmp, 0o666);
    const rt = await SimulatedRuntime.start({ socketPath: path.join(base, 'a.sock'), clock: new FakeClock(), statePath, stateSaveIntervalMs: 0 });
    rt.saveState();
    await rt.close();
    assert.equal(mode(statePath).toString(8), '600');
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
});

test('embedded runtime: its state file lives in <root>/sim-runtime/ (not the root dir), an older one is moved there', async () => {
  const { embeddedStatePath } = await import('../../../src/cli/embedded-runtime.js');
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'simrt-root-'));
  try {
    fs.writeFileSync(path.join(root, 'sim-runtime-state.json'), '{"version":1}');
    const p = embeddedStatePath(root);
    assert.equal(p, path.join(root, 'sim-runtime', 'state.json'));
    assert.equal(fs.readFileSync(p, 'utf8'), '{"version":1}');
    assert.equal(fs.existsSync(path.join(root, 'sim-runtime-state.json')), false);
    assert.equal(mode(path.dirname(p)).toString(8), '700');
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
