/** A bench script's integer flag: `def` when absent, else an integer in [min, max] or an Error naming the flag (and the script's usage). */
export function intFlag(v: string | undefined, name: string, def: number, min: number, max: number, usage: string): number {
  if (v === undefined) return def;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer in ${min}–${max}, got ${JSON.stringify(v)}\n${usage}`);
  return n;
}
