/**
 * Parses the output of `busctl --json=short monitor` (systemd 240+): one JSON object per line
 * per message; a logind PrepareForShutdown signal reads
 *   {"type":"signal",...,"path":"/org/freedesktop/login1","interface":"org.freedesktop.login1.Manager",
 *    "member":"PrepareForShutdown","payload":{"type":"b","data":[true]}}
 * (checked against busctl 252 on a private dbus-daemon). Anything else, including malformed or
 * oversized lines, is not an event. The input is a subprocess's output: bounded and never
 * trusted beyond these fields.
 */

/** Longer lines are not PrepareForShutdown signals (those are ~300 bytes). */
export const MONITOR_LINE_MAX = 64 * 1024;

/** true / false for a PrepareForShutdown(b) signal; undefined for anything else. */
export function parsePrepareForShutdown(line: string): boolean | undefined {
  if (line.length > MONITOR_LINE_MAX) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const m = v as Record<string, unknown>;
  if (m['type'] !== 'signal' || m['interface'] !== 'org.freedesktop.login1.Manager' || m['member'] !== 'PrepareForShutdown' || m['path'] !== '/org/freedesktop/login1') return undefined;
  const payload = m['payload'];
  if (typeof payload !== 'object' || payload === null) return undefined;
  const p = payload as Record<string, unknown>;
  if (p['type'] !== 'b' || !Array.isArray(p['data']) || p['data'].length !== 1) return undefined;
  const b: unknown = p['data'][0];
  return typeof b === 'boolean' ? b : undefined;
}

/**
 * Splits a byte stream into lines, keeping at most MONITOR_LINE_MAX characters of a partial
 * line (the rest of an overlong line is dropped up to its newline).
 */
export class LineSplitter {
  #partial = '';
  #overlong = false;

  push(chunk: string): string[] {
    const out: string[] = [];
    let start = 0;
    for (let nl = chunk.indexOf('\n', start); nl !== -1; nl = chunk.indexOf('\n', start)) {
      const piece = chunk.slice(start, nl);
      if (!this.#overlong && this.#partial.length + piece.length <= MONITOR_LINE_MAX) out.push(this.#partial + piece);
      this.#partial = '';
      this.#overlong = false;
      start = nl + 1;
    }
    const rest = chunk.slice(start);
    if (!this.#overlong) {
      if (this.#partial.length + rest.length > MONITOR_LINE_MAX) {
        this.#overlong = true;
        this.#partial = '';
      } else this.#partial += rest;
    }
    return out;
  }
}
