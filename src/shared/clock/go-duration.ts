/** Go-style durations as the kubelet's flags and config take them ("20s", "1m30s", "500ms", "2h"), and as Go prints them. */
const UNITS: Readonly<Record<string, number>> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** Parses to milliseconds; returns undefined when the text is not a duration. */
export function parseDurationMs(text: string): number | undefined {
  const s = text.trim();
  if (s === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let matched = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    total += Number(m[1]) * (UNITS[m[2]!] ?? NaN);
    matched = re.lastIndex;
  }
  return matched === s.length && s.length > 0 && Number.isFinite(total) ? total : undefined;
}

/** Go's time.Duration.String() for a duration given in (fractional) milliseconds. */
export function formatGoDuration(ms: number): string {
  let ns = Math.round(ms * 1e6);
  if (ns === 0) return '0s';
  const sign = ns < 0 ? '-' : '';
  ns = Math.abs(ns);
  if (ns < 1e9) {
    if (ns < 1e3) return `${sign}${ns}ns`;
    if (ns < 1e6) return `${sign}${trimFraction(ns, 1e3)}µs`;
    return `${sign}${trimFraction(ns, 1e6)}ms`;
  }
  const h = Math.floor(ns / 3.6e12);
  ns -= h * 3.6e12;
  const m = Math.floor(ns / 6e10);
  ns -= m * 6e10;
  const s = `${trimFraction(ns, 1e9)}s`;
  if (h > 0) return `${sign}${h}h${m}m${s}`;
  if (m > 0) return `${sign}${m}m${s}`;
  return `${sign}${s}`;
}

/** `value / unit` with the fraction's trailing zeros removed (exact: integer arithmetic). */
function trimFraction(value: number, unit: number): string {
  const whole = Math.floor(value / unit);
  const frac = value - whole * unit;
  if (frac === 0) return String(whole);
  const digits = String(unit).length - 1;
  return `${whole}.${String(frac).padStart(digits, '0').replace(/0+$/, '')}`;
}
