/**
 * The HPACK decoder (src/shared/hpack/hpack-decoder.ts): RFC 7541 Appendix C examples (with and
 * without Huffman, dynamic table contents and eviction across a sequence of blocks), table size
 * updates, and hostile input — every malformed block is a returned HpackError, never a throw,
 * and the decoder refuses further blocks afterwards (a connection error for the transport).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HpackDecoder, HpackError } from '../../../src/shared/hpack/hpack-decoder.js';
import type { HeaderList } from '../../../src/shared/hpack/hpack-decoder.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

function pairs(list: HeaderList | HpackError): Array<[string, string]> {
  assert.ok(!(list instanceof HpackError), `decode failed: ${list instanceof HpackError ? list.message : ''}`);
  return list.names.map((n, i) => [n, list.values[i] ?? '']);
}

const REQ1: Array<[string, string]> = [[':method', 'GET'], [':scheme', 'http'], [':path', '/'], [':authority', 'www.example.com']];
const REQ2: Array<[string, string]> = [...REQ1, ['cache-control', 'no-cache']];
const REQ3: Array<[string, string]> = [[':method', 'GET'], [':scheme', 'https'], [':path', '/index.html'], [':authority', 'www.example.com'], ['custom-key', 'custom-value']];

test('RFC 7541 C.3: requests without Huffman share one dynamic table', () => {
  const d = new HpackDecoder();
  assert.deepEqual(pairs(d.decode(hex('828684410f7777772e6578616d706c652e636f6d'))), REQ1);
  assert.equal(d.tableBytes, 57);
  assert.deepEqual(pairs(d.decode(hex('828684be58086e6f2d6361636865'))), REQ2);
  assert.equal(d.tableBytes, 110);
  assert.deepEqual(pairs(d.decode(hex('828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565'))), REQ3);
  assert.equal(d.tableBytes, 164);
  assert.equal(d.tableLength, 3);
});

test('RFC 7541 C.4: requests with Huffman', () => {
  const d = new HpackDecoder();
  assert.deepEqual(pairs(d.decode(hex('828684418cf1e3c2e5f23a6ba0ab90f4ff'))), REQ1);
  assert.deepEqual(pairs(d.decode(hex('828684be5886a8eb10649cbf'))), REQ2);
  assert.deepEqual(pairs(d.decode(hex('828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf'))), REQ3);
  assert.equal(d.tableBytes, 164);
});

const RESP1: Array<[string, string]> = [[':status', '302'], ['cache-control', 'private'], ['date', 'Mon, 21 Oct 2013 20:13:21 GMT'], ['location', 'https://www.example.com']];
const RESP2: Array<[string, string]> = [[':status', '307'], ['cache-control', 'private'], ['date', 'Mon, 21 Oct 2013 20:13:21 GMT'], ['location', 'https://www.example.com']];
const RESP3: Array<[string, string]> = [
  [':status', '200'], ['cache-control', 'private'], ['date', 'Mon, 21 Oct 2013 20:13:22 GMT'], ['location', 'https://www.example.com'],
  ['content-encoding', 'gzip'], ['set-cookie', 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1'],
];

test('RFC 7541 C.5: responses without Huffman, 256-octet table: eviction', () => {
  const d = new HpackDecoder({ maxTableSize: 256 });
  assert.deepEqual(pairs(d.decode(hex(`4803333032580770726976617465611d4d6f6e2c203231204f637420323031332032303a31333a323120474d546e1768747470733a2f2f7777772e6578616d706c652e636f6d`))), RESP1);
  assert.equal(d.tableBytes, 222);
  assert.deepEqual(pairs(d.decode(hex('4803333037c1c0bf'))), RESP2);
  assert.equal(d.tableBytes, 222, ':status 307 evicted :status 302');
  assert.deepEqual(pairs(d.decode(hex(`88c1611d4d6f6e2c203231204f637420323031332032303a31333a323220474d54c05a04677a69707738666f6f3d4153444a4b48514b425a584f5157454f50495541585157454f49553b206d61782d6167653d333630303b2076657273696f6e3d31`))), RESP3);
  assert.equal(d.tableBytes, 215);
  assert.equal(d.tableLength, 3);
});

test('RFC 7541 C.6: responses with Huffman, 256-octet table', () => {
  const d = new HpackDecoder({ maxTableSize: 256 });
  assert.deepEqual(pairs(d.decode(hex('488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad171863c78f0b97c8e9ae82ae43d3'))), RESP1);
  assert.deepEqual(pairs(d.decode(hex('4883640effc1c0bf'))), RESP2);
  assert.deepEqual(pairs(d.decode(hex('88c16196d07abe941054d444a8200595040b8166e084a62d1bffc05a839bd9ab77ad94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007'))), RESP3);
  assert.equal(d.tableBytes, 215);
});

test('dynamic table size update: shrinks (evicting), only at the start of a block, never above the advertised size', () => {
  const d = new HpackDecoder();
  d.decode(hex('828684410f7777772e6578616d706c652e636f6d'));
  assert.equal(d.tableLength, 1);
  // 0x20 = size update to 0: empties the table; then index 62 no longer exists.
  assert.deepEqual(pairs(d.decode(hex('2082'))), [[':method', 'GET']]);
  assert.equal(d.tableLength, 0);
  const afterEvict = d.decode(hex('be'));
  assert.ok(afterEvict instanceof HpackError, 'index 62 after the table was emptied');

  const e = new HpackDecoder({ maxTableSize: 4096 });
  // Size update to 4097 (0x3f e2 1f): above the advertised 4096.
  assert.ok(e.decode(hex('3fe21f')) instanceof HpackError);
  const f = new HpackDecoder();
  assert.ok(f.decode(hex('8220')) instanceof HpackError, 'size update after a header field');
  // An entry larger than the whole table empties it and is not added (§4.4).
  const g = new HpackDecoder({ maxTableSize: 40 });
  assert.deepEqual(pairs(g.decode(hex('4001610161'))), [['a', 'a']]); // 34 octets: fits
  assert.equal(g.tableLength, 1);
  assert.deepEqual(pairs(g.decode(hex('40016108' + '62'.repeat(8)))), [['a', 'bbbbbbbb']]); // 41 > 40
  assert.equal(g.tableLength, 0);
});

test('hostile blocks are errors, not exceptions or big allocations; a broken decoder stays broken', () => {
  const cases: Array<[string, Buffer]> = [
    ['index 0', hex('80')],
    ['static index past the tables', hex('ff00')], // 127: no dynamic entries
    ['truncated integer', hex('ff')],
    ['integer overflow', hex('ffffffffffffff7f')],
    ['string length past the block', hex('000a61')],
    ['a string claiming 2 GB', hex('007fffffffff07')],
    ['truncated literal name', hex('00')],
    ['bad Huffman (EOS padding > 7 bits)', hex('0082ffff0161')],
    ['Huffman padding not all ones', hex('008100' + '0161')],
  ];
  for (const [what, block] of cases) {
    const d = new HpackDecoder();
    let out: unknown;
    assert.doesNotThrow(() => { out = d.decode(block); }, what);
    assert.ok(out instanceof HpackError, `${what}: expected an HpackError`);
    assert.ok(d.decode(hex('82')) instanceof HpackError, `${what}: the decoder refuses blocks after an error`);
  }
  // A header list above the limit (many small indexed fields) is an error too.
  const d = new HpackDecoder({ maxHeaderListBytes: 1024 });
  assert.ok(d.decode(Buffer.alloc(100, 0x82)) instanceof HpackError, '100 × (:method GET) = 100 × 42 octets > 1024');
});
