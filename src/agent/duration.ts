/** Go-style durations as the kubelet's flags and config take them ("20s", "1m30s", "500ms", "2h"). */
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
