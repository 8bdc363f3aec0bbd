/**
 * /metrics/probes: the kubelet serves its prober metrics (prober_probe_total,
 * prober_probe_duration_seconds) on their own path. shardlet records them with everything else,
 * so this path keeps only the `prober_*` families of the full exposition.
 */

/** The lines of `text` (Prometheus text format) that belong to families named `prefix*`. */
export function filterFamilies(text: string, prefix: string): string {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const name = line.startsWith('# HELP ') || line.startsWith('# TYPE ') ? line.slice(7) : line.startsWith('#') ? '' : line;
    if (name.startsWith(prefix)) out.push(line);
  }
  return out.length === 0 ? '' : out.join('\n') + '\n';
}
