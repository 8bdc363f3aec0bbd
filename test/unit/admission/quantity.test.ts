import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCpuMillis, parseBytes, parseQuantity, isNegative } from '../../../src/shared/resources/quantity.js';

test('cpu quantities convert to millicores, rounding up', () => {
  assert.equal(parseCpuMillis('2'), 2000);
  assert.equal(parseCpuMillis('500m'), 500);
  assert.equal(parseCpuMillis('0.5'), 500);
  assert.equal(parseCpuMillis('.25'), 250);
  assert.equal(parseCpuMillis('0.1m'), 1);
  assert.equal(parseCpuMillis(2), 2000);
  assert.equal(parseCpuMillis('1e3m'), undefined); // exponent and SI suffix do not combine
  assert.equal(parseCpuMillis('1k'), 1_000_000);
  // n and u are SI suffixes too (the API server accepts them; the worker side always parsed them).
  assert.equal(parseCpuMillis('100u'), 1);
  assert.equal(parseCpuMillis('2000000n'), 2);
});

test('memory quantities convert to bytes (binary and decimal suffixes, exponents)', () => {
  assert.equal(parseBytes('1Gi'), 1024 ** 3);
  assert.equal(parseBytes('128Mi'), 128 * 1024 ** 2);
  assert.equal(parseBytes('129M'), 129_000_000);
  assert.equal(parseBytes('1e3'), 1000);
  assert.equal(parseBytes('1.5Ki'), 1536);
  assert.equal(parseBytes(1e3), 1000);
  assert.equal(parseBytes('128974848'), 128974848);
  assert.equal(parseBytes('0.5'), 1);
  assert.equal(parseBytes('100m'), 1); // 0.1 byte rounds up
});

test('invalid quantities are rejected', () => {
  for (const bad of ['', 'abc', '1Gb', '1 Gi', '--1', '1.2.3', 'Gi', '1ki', null, {}, [], Number.NaN]) {
    assert.equal(parseQuantity(bad), undefined, `should reject ${JSON.stringify(bad)}`);
  }
  const neg = parseQuantity('-1');
  assert.ok(neg && isNegative(neg));
});
