import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import { criErrorFromGrpc, criErrorFromWire, grpcStatusOf, isNotFound, isAlreadyExists, CriError } from '../../src/shared/cri/cri-errors.js';

test('gRPC status codes translate once into stable CRI codes', () => {
  const nf = criErrorFromGrpc('ContainerStatus', { code: status.NOT_FOUND, details: 'container "x" not found' });
  assert.equal(nf.code, 'ERR_CRI_NOT_FOUND');
  assert.equal(nf.operation, 'ContainerStatus');
  assert.ok(isNotFound(nf));
  assert.ok(!isAlreadyExists(nf));
  assert.equal(criErrorFromGrpc('X', { code: 999 }).code, 'ERR_CRI_UNKNOWN');
  assert.equal(criErrorFromGrpc('X', new Error('boom')).code, 'ERR_CRI_UNKNOWN');
});

test('errors survive a thread boundary as {code, message}', () => {
  const e = new CriError('ERR_CRI_ALREADY_EXISTS', 'CreateContainer', 'name reserved');
  const back = criErrorFromWire(structuredClone(e.toWire()));
  assert.equal(back.code, 'ERR_CRI_ALREADY_EXISTS');
  assert.equal(back.message, 'name reserved');
  assert.equal(criErrorFromWire({ code: 'nonsense', message: 'm' }).code, 'ERR_CRI_UNKNOWN');
  assert.equal(grpcStatusOf('ERR_CRI_NOT_FOUND'), status.NOT_FOUND);
});
