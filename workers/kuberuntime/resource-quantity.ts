/**
 * Kubernetes resource quantities ("100m", "0.5", "128Mi", "1G", "1e3") → numbers, for the two
 * resources the runtime config and QoS class need: CPU (millicores) and memory (bytes). Values
 * round up like resource.Quantity's MilliValue()/Value(). An unparsable quantity reads as 0.
 */
const BINARY: Readonly<Record<string, number>> = Object.freeze({
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
});
const DECIMAL: Readonly<Record<string, number>> = Object.freeze({
  n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
});

const QUANTITY_RE = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$/;

/** The quantity in base units (cores, bytes), or undefined when it does not parse. */
export function parseQuantity(q: string | number | undefined): number | undefined {
  if (q === undefined) return undefined;
  if (typeof q === 'number') return Number.isFinite(q) ? q : undefined;
  const m = QUANTITY_RE.exec(q.trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  if (m[3] !== undefined) return n * 10 ** Number(m[3]);
  const suffix = m[2] ?? '';
  const mult = BINARY[suffix] ?? DECIMAL[suffix] ?? 1;
  return n * mult;
}

/** CPU quantity in millicores, rounded up; 0 when absent or invalid. */
export function cpuMillis(q: string | undefined): number {
  const v = parseQuantity(q);
  return v === undefined || v <= 0 ? 0 : Math.ceil(Math.round(v * 1e9) / 1e6);
}

/** Memory (or any integer resource) in base units, rounded up; 0 when absent or invalid. */
export function quantityValue(q: string | undefined): number {
  const v = parseQuantity(q);
  return v === undefined || v <= 0 ? 0 : Math.ceil(v);
}
