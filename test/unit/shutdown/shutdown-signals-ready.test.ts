/**
 * The SIGUSR1 source (the kubelet's second shutdown signal) over an injected emitter, and the
 * Ready condition with the shutdown manager's error last, as the kubelet aggregates it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { SignalShutdownSource } from '../../../src/main/shutdown/signal-shutdown-source.js';
import { readyCondition } from '../../../src/main/node-status/node-conditions.js';

test('SIGUSR1 means "shutdown is imminent" until closed; no lock to release', async () => {
  const proc = new EventEmitter();
  const src = new SignalShutdownSource(proc);
  const got: boolean[] = [];
  await src.start((b) => got.push(b));
  proc.emit('SIGUSR1');
  assert.deepEqual(got, [true]);
  await src.release();
  await src.reacquire();
  proc.emit('SIGUSR1');
  assert.deepEqual(got, [true, true]);
  await src.close();
  await src.close();
  assert.equal(proc.listenerCount('SIGUSR1'), 0);
  proc.emit('SIGUSR1');
  assert.deepEqual(got, [true, true]);
});

test('Ready: "node is shutting down" alone, or last after runtime and network errors', () => {
  assert.deepEqual(readyCondition({ runtimeErrors: [], networkErrors: [], shutdownErrors: ['node is shutting down'] }), { status: 'False', reason: 'KubeletNotReady', message: 'node is shutting down' });
  assert.equal(readyCondition({ runtimeErrors: ['rt down'], networkErrors: ['net down'], shutdownErrors: ['node is shutting down'] }).message, '[rt down, net down, node is shutting down]');
  assert.equal(readyCondition({ runtimeErrors: [], networkErrors: [], shutdownErrors: [] }).status, 'True');
});
