/**
 * A small, dependency-free SVG line chart: axes with "nice" ticks, axis labels, a title, one
 * polyline (plus point markers) per series and a legend. The output is a standalone SVG 1.1
 * document (XML prolog, xmlns) that opens directly in a browser.
 *
 * Pure: a spec in, a string out. Every piece of caller text is XML-escaped. Non-finite points
 * are dropped (a configuration that did not run leaves a gap, not a broken path).
 */

export type AxisScale = 'linear' | 'log';

export interface Series {
  name: string;
  points: ReadonlyArray<readonly [number, number]>;
}

export interface LineChartSpec {
  title: string;
  xLabel: string;
  yLabel: string;
  series: readonly Series[];
  /** Log x suits pod counts 100…5,000; default linear. */
  xScale?: AxisScale;
  /** Draw steps (CDFs) instead of straight segments. */
  step?: boolean;
  /** Force the y range to start at 0 (default true: throughputs, delays and RSS are ≥ 0). */
  yFromZero?: boolean;
  width?: number;
  height?: number;
}

/** Colour-blind-friendly palette (Okabe–Ito), cycled by series index. */
export const PALETTE: readonly string[] = Object.freeze(['#0072B2', '#E69F00', '#009E73', '#D55E00', '#CC79A7', '#56B4E9', '#F0E442', '#000000']);

const MARGIN = Object.freeze({ left: 72, right: 190, top: 44, bottom: 56 });

export function escapeXml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] as string);
}

/** About `count` round tick values (1, 2, 5 × 10^k) covering [min, max]. */
export function niceTicks(min: number, max: number, count = 5): number[] {
  if (!(Number.isFinite(min) && Number.isFinite(max))) return [];
  if (max === min) return [min];
  const raw = (max - min) / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const norm = raw / mag;
  const step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
  const out: number[] = [];
  for (let v = Math.ceil(min / step - 1e-9) * step; v <= max + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

/** Powers of ten (and 2×, 5× when the range is narrow) within [min, max], for a log axis. */
export function logTicks(min: number, max: number): number[] {
  if (!(min > 0 && max >= min)) return [];
  const out: number[] = [];
  const narrow = Math.log10(max / min) < 2;
  for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) {
    for (const m of narrow ? [1, 2, 5] : [1]) {
      const v = m * 10 ** e;
      if (v >= min * (1 - 1e-9) && v <= max * (1 + 1e-9)) out.push(v);
    }
  }
  return out.length > 0 ? out : [min, max];
}

export function formatTick(v: number): string {
  const a = Math.abs(v);
  if (a >= 1e6) return `${Number((v / 1e6).toPrecision(3))}M`;
  if (a >= 1e4) return `${Number((v / 1e3).toPrecision(3))}k`;
  if (a === 0 || a >= 1) return String(Number(v.toPrecision(4)));
  return String(Number(v.toPrecision(2)));
}

export function renderLineChart(spec: LineChartSpec): string {
  const width = spec.width ?? 760;
  const height = spec.height ?? 420;
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = height - MARGIN.top - MARGIN.bottom;
  const xLog = spec.xScale === 'log';
  const series = spec.series.map((s) => ({
    name: s.name,
    points: s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y) && (!xLog || x > 0)),
  }));
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = series.flatMap((s) => s.points.map((p) => p[1]));
  let [xMin, xMax] = xs.length > 0 ? [Math.min(...xs), Math.max(...xs)] : [0, 1];
  let [yMin, yMax] = ys.length > 0 ? [Math.min(...ys), Math.max(...ys)] : [0, 1];
  if (spec.yFromZero !== false) yMin = Math.min(0, yMin);
  if (xMax === xMin) [xMin, xMax] = xLog ? [xMin / 2, xMax * 2] : [xMin - 1, xMax + 1];
  if (yMax === yMin) yMax = yMin + 1;
  const yTicks = niceTicks(yMin, yMax);
  yMax = Math.max(yMax, ...yTicks);
  const xTicks = xLog ? logTicks(xMin, xMax) : niceTicks(xMin, xMax);
  const xPos = (x: number): number =>
    MARGIN.left + (xLog ? Math.log10(x / xMin) / Math.log10(xMax / xMin) : (x - xMin) / (xMax - xMin)) * plotW;
  const yPos = (y: number): number => MARGIN.top + plotH - ((y - yMin) / (yMax - yMin)) * plotH;
  const f = (n: number): string => n.toFixed(1);

  const parts: string[] = [];
  parts.push('<?xml version="1.0" encoding="UTF-8"?>');
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`);
  parts.push(`<title>${escapeXml(spec.title)}</title>`);
  parts.push(`<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`);
  parts.push(`<text x="${width / 2}" y="24" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(spec.title)}</text>`);
  // Grid and ticks.
  parts.push('<g class="y-axis" stroke="#dddddd">');
  for (const t of yTicks) {
    const y = f(yPos(t));
    parts.push(`<line x1="${MARGIN.left}" y1="${y}" x2="${MARGIN.left + plotW}" y2="${y}"/>`);
    parts.push(`<text x="${MARGIN.left - 6}" y="${y}" dy="4" text-anchor="end" stroke="none" fill="#333333">${escapeXml(formatTick(t))}</text>`);
  }
  parts.push('</g>');
  parts.push('<g class="x-axis" stroke="#dddddd">');
  for (const t of xTicks) {
    const x = f(xPos(t));
    parts.push(`<line x1="${x}" y1="${MARGIN.top}" x2="${x}" y2="${MARGIN.top + plotH}"/>`);
    parts.push(`<text x="${x}" y="${MARGIN.top + plotH + 16}" text-anchor="middle" stroke="none" fill="#333333">${escapeXml(formatTick(t))}</text>`);
  }
  parts.push('</g>');
  parts.push(`<rect x="${MARGIN.left}" y="${MARGIN.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#333333"/>`);
  parts.push(`<text x="${MARGIN.left + plotW / 2}" y="${height - 14}" text-anchor="middle">${escapeXml(spec.xLabel)}</text>`);
  parts.push(`<text x="16" y="${MARGIN.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 16 ${MARGIN.top + plotH / 2})">${escapeXml(spec.yLabel)}</text>`);
  // Series.
  series.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length] as string;
    const pts: string[] = [];
    let prev: readonly [number, number] | undefined;
    for (const p of s.points) {
      if (spec.step && prev) pts.push(`${f(xPos(p[0]))},${f(yPos(prev[1]))}`);
      pts.push(`${f(xPos(p[0]))},${f(yPos(p[1]))}`);
      prev = p;
    }
    parts.push(`<g class="series" data-name="${escapeXml(s.name)}">`);
    if (pts.length > 0) parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.join(' ')}"/>`);
    if (!spec.step) for (const p of s.points) parts.push(`<circle cx="${f(xPos(p[0]))}" cy="${f(yPos(p[1]))}" r="3" fill="${color}"/>`);
    parts.push('</g>');
  });
  // Legend.
  parts.push('<g class="legend">');
  series.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length] as string;
    const x = MARGIN.left + plotW + 14;
    const y = MARGIN.top + 8 + i * 18;
    parts.push(`<line x1="${x}" y1="${y}" x2="${x + 18}" y2="${y}" stroke="${color}" stroke-width="3"/>`);
    parts.push(`<text x="${x + 24}" y="${y + 4}">${escapeXml(s.name)}${s.points.length === 0 ? ' (no data)' : ''}</text>`);
  });
  parts.push('</g>');
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}
