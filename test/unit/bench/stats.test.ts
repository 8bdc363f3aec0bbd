import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bucketDelta, cdfPoints, histogramQuantile, percentile, ratePerSecond, summarize } from '../../../bench/stats.js';

test('nearest-rank percentiles pick real samples', () => {
  const xs = Array.from({ length: 100 }, (_, i) => 100 - i); // 100..1, unsorted
  assert.equal(percentile(xs, 50), 50);
  assert.equal(percentile(xs, 90), 90);
  assert.equal(percentile(xs, 99), 99);
  assert.equal(percentile(xs, 100), 100);
  assert.equal(percentile(xs, 0), 1);
  assert.equal(percentile([7], 99), 7);
  assert.ok(Number.isNaN(percentile([], 50)));
  assert.equal(xs[0], 100, 'input left unsorted');
  assert.throws(() => percentile(xs, 101), RangeError);
});

test('percentiles sort numerically, not as strings', () => {
  assert.equal(percentile([10, 9, 100, 2], 50), 9);
  assert.equal(percentile([10, 9, 100, 2], 100), 100);
});

test('summarize gives count/min/mean/p50/p90/p99/max, null when empty', () => {
  const s = summarize([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  assert.deepEqual(s, { count: 10, min: 1, mean: 5.5, p50: 5, p90: 9, p99: 10, max: 10 });
  assert.equal(summarize([]), null);
});

test('cdfPoints is ascending, ends at 1 and is downsampled to maxPoints', () => {
  assert.deepEqual(cdfPoints([3, 1, 2]), [[1, 1 / 3], [2, 2 / 3], [3, 1]]);
  const big = Array.from({ length: 5000 }, (_, i) => i);
  const pts = cdfPoints(big, 50);
  assert.equal(pts.length, 50);
  assert.deepEqual(pts[0], [0, 1 / 5000]);
  assert.deepEqual(pts[pts.length - 1], [4999, 1]);
  for (let i = 1; i < pts.length; i++) assert.ok((pts[i] as [number, number])[0] > (pts[i - 1] as [number, number])[0]);
  assert.deepEqual(cdfPoints([]), []);
});

test('histogramQuantile interpolates like PromQL histogram_quantile', () => {
  const b = [
    { le: 0.1, count: 50 },
    { le: 0.2, count: 90 },
    { le: 0.5, count: 100 },
    { le: Infinity, count: 100 },
  ];
  assert.ok(Math.abs(histogramQuantile(b, 0.5) - 0.1) < 1e-12);
  assert.ok(Math.abs(histogramQuantile(b, 0.7) - 0.15) < 1e-12);
  assert.ok(Math.abs(histogramQuantile(b, 0.95) - 0.35) < 1e-12);
  assert.ok(Math.abs(histogramQuantile(b, 0.25) - 0.05) < 1e-12, 'lowest bucket starts at 0');
  // Rank in +Inf: the highest finite bound.
  assert.equal(histogramQuantile([{ le: 1, count: 1 }, { le: Infinity, count: 10 }], 0.99), 1);
  assert.ok(Number.isNaN(histogramQuantile([{ le: 1, count: 0 }, { le: Infinity, count: 0 }], 0.5)));
});

test('bucketDelta subtracts a previous scrape bucket by bucket', () => {
  const before = [{ le: 1, count: 5 }, { le: Infinity, count: 6 }];
  const after = [{ le: 1, count: 8 }, { le: 2, count: 9 }, { le: Infinity, count: 12 }];
  assert.deepEqual(bucketDelta(before, after), [{ le: 1, count: 3 }, { le: 2, count: 9 }, { le: Infinity, count: 6 }]);
});

test('ratePerSecond', () => {
  assert.equal(ratePerSecond(100, 2000), 50);
  assert.equal(ratePerSecond(100, 0), null);
});
