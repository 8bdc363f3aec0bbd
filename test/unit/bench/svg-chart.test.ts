import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeXml, logTicks, niceTicks, renderLineChart } from '../../../bench/svg-chart.js';

/**
 * A strict-enough XML well-formedness check for what the chart module emits: one prolog, tags
 * balanced and properly nested, attributes quoted, no raw `<` or `&` in text, one root element.
 */
function assertWellFormedXml(xml: string): void {
  let s = xml.replace(/^<\?xml[^?]*\?>\s*/, '');
  assert.ok(!s.includes('<?'), 'a single prolog');
  const stack: string[] = [];
  let roots = 0;
  const tagRe = /<(\/?)([a-zA-Z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/y;
  let i = 0;
  while (i < s.length) {
    const lt = s.indexOf('<', i);
    const text = lt === -1 ? s.slice(i) : s.slice(i, lt);
    assert.ok(!/&(?!(lt|gt|amp|quot|apos);)/.test(text), `unescaped & in text: ${text}`);
    if (stack.length === 0) assert.equal(text.trim(), '', `text outside the root: ${text}`);
    if (lt === -1) break;
    tagRe.lastIndex = lt;
    const m = tagRe.exec(s);
    assert.ok(m, `malformed tag at ${lt}: ${s.slice(lt, lt + 60)}`);
    const [, close, name, , selfClose] = m;
    if (close) assert.equal(stack.pop(), name, `mismatched </${name}>`);
    else {
      if (stack.length === 0) roots++;
      if (!selfClose) stack.push(name as string);
    }
    i = tagRe.lastIndex;
  }
  assert.equal(stack.length, 0, `unclosed: ${stack.join(',')}`);
  assert.equal(roots, 1, 'exactly one root element');
  s = '';
}

test('renders a standalone, well-formed SVG with one polyline and legend entry per series', () => {
  const svg = renderLineChart({
    title: 'Throughput <vs> pods & "stuff"',
    xLabel: 'pods',
    yLabel: 'pods/s',
    xScale: 'log',
    series: [
      { name: 'sim/zero w=0 (inline)', points: [[100, 50], [1000, 80]] },
      { name: 'sim/zero w=2', points: [[100, 70], [1000, 150], [5000, Number.NaN]] },
      { name: 'empty', points: [] },
    ],
  });
  assertWellFormedXml(svg);
  assert.match(svg, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.equal((svg.match(/<polyline /g) ?? []).length, 2, 'no polyline for the empty series');
  assert.equal((svg.match(/<g class="series"/g) ?? []).length, 3);
  assert.ok(svg.includes('Throughput &lt;vs&gt; pods &amp; &quot;stuff&quot;'));
  assert.ok(svg.includes('>sim/zero w=2<'));
  assert.ok(svg.includes('>empty (no data)<'));
  assert.ok(!svg.includes('NaN'), 'non-finite points dropped');
  // Log axis ticks at powers of ten within range.
  assert.ok(svg.includes('>100<') && svg.includes('>1000<'));
});

test('step charts (CDF) produce staircase vertices and no markers', () => {
  const svg = renderLineChart({ title: 'cdf', xLabel: 'ms', yLabel: 'fraction', step: true, series: [{ name: 'a', points: [[1, 0.5], [2, 1]] }] });
  assertWellFormedXml(svg);
  const pts = /points="([^"]+)"/.exec(svg)?.[1]?.split(' ') ?? [];
  assert.equal(pts.length, 3, 'two points → three vertices as a step');
  assert.ok(!svg.includes('<circle'));
});

test('empty chart still renders valid XML', () => {
  assertWellFormedXml(renderLineChart({ title: 't', xLabel: 'x', yLabel: 'y', series: [] }));
});

test('the checker itself rejects broken XML', () => {
  assert.throws(() => assertWellFormedXml('<svg><g></svg>'));
  assert.throws(() => assertWellFormedXml('<svg>a & b</svg>'));
  assert.throws(() => assertWellFormedXml('<svg x=1></svg>'));
});

test('ticks', () => {
  assert.deepEqual(niceTicks(0, 10), [0, 2, 4, 6, 8, 10]);
  assert.deepEqual(niceTicks(0, 0.95, 5), [0, 0.2, 0.4, 0.6, 0.8]);
  assert.deepEqual(logTicks(100, 5000), [100, 200, 500, 1000, 2000, 5000]);
  assert.deepEqual(logTicks(10, 100000), [10, 100, 1000, 10000, 100000]);
  assert.equal(escapeXml(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;');
});
