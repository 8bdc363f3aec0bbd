import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deepEqual } from '../../../src/shared/immutable/deep-equal.js';

test('deepEqual: structure, order-free keys, undefined as absent, Dates by time', () => {
  const a = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], startTime: new Date(1000), extra: undefined };
  const b = { startTime: new Date(1000), conditions: [{ status: 'True', type: 'Ready' }], phase: 'Running' };
  assert.equal(deepEqual(a, b), true);
  assert.equal(deepEqual(b, a), true);
  assert.equal(deepEqual({ ...b, startTime: new Date(1001) }, b), false, 'a Date by its time');
  assert.equal(deepEqual({ ...b, phase: 'Pending' }, b), false);
  assert.equal(deepEqual({ ...b, hostIP: '10.0.0.1' }, b), false, 'a key only on the left');
  assert.equal(deepEqual(b, { ...b, hostIP: '10.0.0.1' }), false, 'a key only on the right');
  assert.equal(deepEqual({ ...b, conditions: [...b.conditions, { type: 'X', status: 'False' }] }, b), false, 'array length');
  assert.equal(deepEqual({ ...b, conditions: [{ type: 'Ready', status: 'False' }] }, b), false, 'array element');
  assert.equal(deepEqual([1, 2], { 0: 1, 1: 2 }), false, 'an array is not an object');
  assert.equal(deepEqual(new Date(NaN), new Date(NaN)), true);
  assert.equal(deepEqual(new Date(5), 5), false);
  assert.equal(deepEqual(null, {}), false);
  assert.equal(deepEqual(1, '1'), false);
  // Inherited keys are not data.
  const proto = { inherited: 1 };
  assert.equal(deepEqual(Object.create(proto), {}), true);
});
