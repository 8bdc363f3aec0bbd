/** Probe lateness, missed and doubled probes from arrival times (bench/probe-timeline.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { analyseProbeTimes } from '../../../bench/probe-timeline.js';

const P = 10_000;

describe('analyseProbeTimes', () => {
  it('an on-time probe per period: no lateness beyond jitter, nothing missed or doubled', () => {
    const a = new Map([['p', [1_000, 11_000, 21_050, 31_000, 41_000, 51_000]]]);
    const s = analyseProbeTimes(a, ['p'], P, 0, 60_000);
    assert.equal(s.probes, 6);
    assert.equal(s.missed, 0);
    assert.equal(s.doubled, 0);
    assert.equal(s.latenessMs?.max, 50);
    assert.equal(s.latenessMs?.count, 5);
  });

  it('counts a missed probe in the middle and at the edges, a doubled one, and a silent pod', () => {
    const a = new Map([
      ['gap', [1_000, 21_000, 31_000, 41_000, 51_000]], // 11 000 never came
      ['edge', [21_000, 31_000, 41_000]], // nothing in the first 21 s nor the last 19 s
      ['twice', [1_000, 11_000, 11_200, 21_000, 31_000, 41_000, 51_000]],
      ['late', [1_000, 14_000, 24_000, 34_000, 44_000, 54_000]],
    ]);
    const s = analyseProbeTimes(a, ['gap', 'edge', 'twice', 'late', 'silent'], P, 0, 60_000);
    assert.equal(s.silentPods, 1);
    assert.equal(s.doubled, 1);
    // gap: 1; edge: round(21/10)-1 = 1 at the start, round(19/10)-1 = 1 at the end; silent: 6.
    assert.equal(s.missed, 1 + 2 + 6);
    assert.equal(s.latenessMs?.max, 3_000);
  });

  it('ignores arrivals outside the window and pods not asked for', () => {
    const a = new Map([
      ['p', [-5_000, 5_000, 15_000, 65_000]],
      ['other', [1, 2, 3]],
    ]);
    const s = analyseProbeTimes(a, ['p'], P, 0, 20_000);
    assert.equal(s.probes, 2);
    assert.equal(s.pods, 1);
    assert.equal(s.missed, 0);
  });
});
