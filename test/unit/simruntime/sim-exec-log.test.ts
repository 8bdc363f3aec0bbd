/**
 * The sim-runtime's ExecSync log (--exec-log, sim-exec-log.ts): the probe-density bench counts
 * exec probes from it, so every ExecSync must leave exactly one parseable line naming the
 * container and the command, at the runtime's clock.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parseExecLogLine } from '../../../src/simruntime/sim-exec-log.js';
import { runPod, startHarness } from './sim-harness.js';

describe('sim-runtime --exec-log', () => {
  it('writes one line per ExecSync, flushed by close()', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'simexeclog-')), 'exec.log');
    const h = await startHarness({ execLogPath: file });
    let containerId = '';
    try {
      ({ containerId } = await runPod(h, ['sleep', '1000']));
      await h.client.execSync({ containerId, cmd: ['echo', 'pod-a'], timeout: 5 });
      await h.client.execSync({ containerId, cmd: ['sh', '-c', 'echo "a b"\nexit 1'], timeout: 5 });
    } finally {
      await h.close();
    }
    const lines = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l !== '');
    assert.equal(lines.length, 2);
    const parsed = lines.map(parseExecLogLine);
    assert.deepEqual(
      parsed.map((p) => [p?.containerId, p?.cmd]),
      [
        [containerId, ['echo', 'pod-a']],
        [containerId, ['sh', '-c', 'echo "a b"\nexit 1']],
      ],
    );
    assert.ok(parsed.every((p) => p !== null && Number.isFinite(p.atMs)));
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });

  it('rejects malformed lines', () => {
    assert.equal(parseExecLogLine('garbage'), null);
    assert.equal(parseExecLogLine('12 abc not-json'), null);
    assert.equal(parseExecLogLine('x abc ["a"]'), null);
    assert.equal(parseExecLogLine('12 abc [1]'), null);
  });
});
