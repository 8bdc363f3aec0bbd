import { test } from 'node:test';
import assert from 'node:assert/strict';
import { codeArea, summarizeProfile, threadRole, type CpuProfile } from '../../../bench/cpu-profile-summary.js';

const frame = (functionName: string, url = '', lineNumber = -1) => ({ functionName, url, lineNumber });

// Five samples, 1 ms apart except where noted: idle, encode ×2, GC (3 ms), idle.
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)') },
    { id: 2, callFrame: frame('(idle)') },
    { id: 3, callFrame: frame('encode', 'file:///work/main/dist/src/shared/pod-cache/pod-codec.js', 41) },
    { id: 4, callFrame: frame('(garbage collector)') },
    { id: 5, callFrame: frame('', 'file:///work/main/dist/workers/pleg/pleg-thread.js', 9) },
  ],
  startTime: 0,
  endTime: 8000,
  samples: [2, 3, 3, 4, 5, 2],
  timeDeltas: [1000, 1000, 1000, 3000, 1000, 1000],
};

test('self time is summed per function + script + line; idle is not busy; GC is counted apart', () => {
  const s = summarizeProfile(profile, 'pleg');
  assert.equal(s.wallMs, 8);
  assert.equal(s.busyMs, 6);
  assert.equal(s.gcMs, 3);
  assert.deepEqual(s.top, [
    { fn: '(garbage collector)', url: '', line: 0, selfMs: 3 },
    { fn: 'encode', url: 'dist/src/shared/pod-cache/pod-codec.js', line: 42, selfMs: 2 },
    { fn: '(anonymous)', url: 'dist/workers/pleg/pleg-thread.js', line: 10, selfMs: 1 },
  ]);
  assert.deepEqual(s.areas, [
    { area: 'v8: garbage collector', selfMs: 3 },
    { area: 'agent src/shared/pod-cache', selfMs: 2 },
    { area: 'agent workers/pleg', selfMs: 1 },
  ]);
});

test('code areas: the CRI transport, agent folders, packages (their own dist/ is not the agent\'s)', () => {
  assert.equal(codeArea('makeUnaryRequest', 'node_modules/@grpc/grpc-js/build/src/client.js'), 'CRI transport (grpc-js, protobuf, http2)');
  assert.equal(codeArea('request', 'node:internal/http2/core'), 'CRI transport (grpc-js, protobuf, http2)');
  assert.equal(codeArea('podRequests', 'dist/src/main/admission/pod-requests.js'), 'agent src/main/admission');
  assert.equal(codeArea('run', 'dist/workers/pod-workers.js'), 'agent workers/pod-workers');
  assert.equal(codeArea('postTask', 'node_modules/piscina/dist/worker_pool/index.js'), 'package piscina');
  assert.equal(codeArea('(program)', ''), 'v8: (program)');
});

test('a window keeps only the samples inside it', () => {
  // Sample times: 1, 2, 3, 6, 7, 8 ms; the window 1.5–6.5 ms holds encode@2, encode@3, GC@6.
  const s = summarizeProfile(profile, 'main', { fromS: 0.0015, toS: 0.0065 });
  assert.equal(s.busyMs, 5);
  assert.deepEqual(s.top.map((f) => f.fn), ['(garbage collector)', 'encode']);
});

test('thread role: from the thread entry script, else the main thread by its file name', () => {
  assert.equal(threadRole(profile, 'CPU.20261120.235959.100.3.0.cpuprofile'), 'pleg');
  const plain: CpuProfile = { ...profile, nodes: [{ id: 1, callFrame: frame('(root)') }] };
  assert.equal(threadRole(plain, 'CPU.20261120.235959.100.0.0.cpuprofile'), 'main');
  assert.equal(threadRole(plain, 'CPU.20261120.235959.100.7.0.cpuprofile'), 'other');
});
