/** The node's InternalIP, which is also the pods' hostIP (host-addresses.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nodeInternalIP, primaryHostIP } from '../../../src/main/agent/host-addresses.js';

test('nodeInternalIP: --node-ip when given; unset or unspecified → the detected address', () => {
  assert.equal(nodeInternalIP('10.1.2.3'), '10.1.2.3');
  assert.equal(nodeInternalIP('fd00::5'), 'fd00::5');
  const detected = primaryHostIP();
  assert.equal(nodeInternalIP(undefined), detected);
  assert.equal(nodeInternalIP('0.0.0.0'), detected);
  assert.equal(nodeInternalIP('::'), detected);
});
