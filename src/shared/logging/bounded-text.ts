/**
 * The one place values from untrusted input are shortened before they reach an error message or
 * a log line. A manifest can carry a 10 MiB name; echoing it in full makes a 20 MiB log line per
 * report (and one fuzz run wrote a 337 MB line). Every field error and every log field goes
 * through these helpers, so no single value can add more than about {@link MAX_SHOWN_CHARS}
 * characters to a line.
 *
 * Both helpers do work bounded by their limit, not by the size of the value: a huge string is
 * sliced, a huge or alias-expanded object is serialized only until the limit is reached (the
 * walk counts nodes too, so a YAML alias bomb is never expanded here).
 */

/** Characters of one value shown in an error or log field. */
export const MAX_SHOWN_CHARS = 256;

/** Nodes visited at most while rendering one object (bounds the work on aliased structures). */
const MAX_RENDER_NODES = 256;

/** `s`, or its first `max` characters followed by a note of how many were left out. */
export function truncateText(s: string, max: number = MAX_SHOWN_CHARS): string {
  if (s.length <= max) return s;
  // Never cut a surrogate pair in half (the line must stay valid UTF-8 once encoded).
  let end = max;
  const code = s.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${s.slice(0, end)}...(${s.length - end} more characters)`;
}

class RenderFull extends Error {}

/**
 * JSON-like rendering of any value, at most about `max` characters: strings are quoted, objects
 * and lists rendered until the budget runs out (then `...`). Never throws, never recurses
 * without bound (cycles and shared subtrees are cut by the node budget).
 */
export function boundedJson(v: unknown, max: number = MAX_SHOWN_CHARS): string {
  if (typeof v === 'string') return JSON.stringify(truncateText(v, max));
  let out = '';
  let nodes = 0;
  const put = (s: string): void => {
    if (out.length + s.length > max) {
      out += s.slice(0, Math.max(0, max - out.length));
      throw new RenderFull();
    }
    out += s;
  };
  const walk = (x: unknown): void => {
    if (++nodes > MAX_RENDER_NODES) throw new RenderFull();
    if (typeof x === 'string') return put(JSON.stringify(truncateText(x, max)));
    if (typeof x === 'number' || typeof x === 'boolean' || x === null) return put(String(x));
    if (x === undefined) return put('null');
    if (typeof x === 'bigint') return put(x.toString());
    if (typeof x !== 'object') return put(`<${typeof x}>`);
    if (x instanceof Date) return put(Number.isNaN(x.getTime()) ? '"<invalid date>"' : JSON.stringify(x.toISOString()));
    if (ArrayBuffer.isView(x)) return put(`<${x.byteLength} bytes of binary data>`);
    if (Array.isArray(x)) {
      put('[');
      x.forEach((e: unknown, i) => {
        if (i > 0) put(',');
        walk(e);
      });
      return put(']');
    }
    put('{');
    let first = true;
    for (const k of Object.keys(x)) {
      if (!first) put(',');
      first = false;
      put(`${JSON.stringify(truncateText(k, max))}:`);
      walk(Reflect.get(x, k));
    }
    put('}');
  };
  try {
    walk(v);
    return out;
  } catch (e) {
    if (e instanceof RenderFull) return `${out}...`;
    return '<unprintable>';
  }
}
