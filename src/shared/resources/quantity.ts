/**
 * Kubernetes resource quantities (apimachinery `resource.Quantity`): "2", "500m", "1Gi", "1e3",
 * "0.5", "128974848", "129M". Parsed exactly with BigInt so "0.1" + "0.2" cpu is 300 millicores,
 * never 300.00000000000006.
 *
 *   <quantity> ::= <sign>? <digits>[.<digits>] <suffix>
 *   <suffix>   ::= Ki|Mi|Gi|Ti|Pi|Ei  |  n|u|m|""|k|M|G|T|P|E  |  (e|E)<sign>?<digits>
 *
 * Conversions round up, as `Quantity.MilliValue()` / `Value()` do: 0.1m cpu is 1 millicore and
 * 0.5 bytes of memory is 1 byte. Results are JS numbers (exact up to 2^53; larger values are
 * clamped to Number.MAX_SAFE_INTEGER, far beyond any real node).
 *
 * The one quantity parser: validation, admission and node allocatable (main thread) and the
 * runtime config, QoS class, downward API and emptyDir size limit (worker threads) all use it.
 */

/** Exact value = mantissa * 10^exp10 * 2^exp2. */
export interface Quantity {
  readonly mantissa: bigint;
  readonly exp10: number;
  readonly exp2: number;
}

/** The API server's own wording for an unparsable quantity. */
export const QUANTITY_FORMAT_DETAIL =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

const QUANTITY_RE = /^([+-]?)(\d+\.?\d*|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/;

const DECIMAL_SUFFIX: Readonly<Record<string, number>> = Object.freeze({ n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 });
const BINARY_SUFFIX: Readonly<Record<string, number>> = Object.freeze({ Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 });

/**
 * Parses a quantity as it appears in a manifest: a string, or a bare YAML/JSON number
 * (`cpu: 2`). Returns undefined when it is not a valid quantity.
 */
export function parseQuantity(input: unknown): Quantity | undefined {
  let s: string;
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) return undefined;
    s = String(input);
  } else if (typeof input === 'string') {
    s = input.trim();
  } else {
    return undefined;
  }
  if (s.length === 0 || s.length > 64) return undefined;
  const m = QUANTITY_RE.exec(s);
  if (!m) return undefined;
  const sign = m[1] === '-' ? -1n : 1n;
  const num = m[2] ?? '';
  const suffix = m[3] ?? '';
  const dot = num.indexOf('.');
  const intPart = dot < 0 ? num : num.slice(0, dot);
  const fracPart = dot < 0 ? '' : num.slice(dot + 1);
  const mantissa = sign * BigInt((intPart + fracPart).replace(/^0+(?=\d)/, '') || '0');
  let exp10 = -fracPart.length;
  let exp2 = 0;
  if (suffix in BINARY_SUFFIX) exp2 = BINARY_SUFFIX[suffix] ?? 0;
  else if (suffix in DECIMAL_SUFFIX) exp10 += DECIMAL_SUFFIX[suffix] ?? 0;
  else if (suffix.length > 0) {
    const e = Number(suffix.slice(1));
    if (!Number.isSafeInteger(e) || Math.abs(e) > 100) return undefined;
    exp10 += e;
  }
  return { mantissa, exp10, exp2 };
}

export function isNegative(q: Quantity): boolean {
  return q.mantissa < 0n;
}

/** ceil(q * 10^shift10) as a number, clamped to the safe-integer range. */
function scaledCeil(q: Quantity, shift10: number): number {
  let num = q.mantissa * (1n << BigInt(q.exp2));
  let den = 1n;
  const e = q.exp10 + shift10;
  if (e >= 0) num *= 10n ** BigInt(e);
  else den = 10n ** BigInt(-e);
  let v = num / den;
  if (num % den !== 0n && num > 0n) v += 1n; // round toward +infinity, like Quantity.Value()
  const max = BigInt(Number.MAX_SAFE_INTEGER);
  if (v > max) return Number.MAX_SAFE_INTEGER;
  if (v < -max) return -Number.MAX_SAFE_INTEGER;
  return Number(v);
}

/** The value in thousandths of a unit, rounded up: cpu in millicores (`Quantity.MilliValue()`). */
export function milliValue(q: Quantity): number {
  return scaledCeil(q, 3);
}

/** The value in whole units, rounded up: memory in bytes (`Quantity.Value()`). */
export function unitValue(q: Quantity): number {
  return scaledCeil(q, 0);
}

/** Parses a cpu quantity to millicores, or undefined if invalid. */
export function parseCpuMillis(input: unknown): number | undefined {
  const q = parseQuantity(input);
  return q === undefined ? undefined : milliValue(q);
}

/** Parses a memory (or any integer-unit) quantity to bytes, or undefined if invalid. */
export function parseBytes(input: unknown): number | undefined {
  const q = parseQuantity(input);
  return q === undefined ? undefined : unitValue(q);
}

/**
 * The value in base units (cores, bytes) as a float, for ratios and sums that the kubelet also
 * does in floating point (downward API divisors, QoS request/limit sums). Exact mantissas and
 * powers of ten give the correctly rounded value, as Number("1.5") would.
 */
export function approximateValue(q: Quantity): number {
  const m = Number(q.mantissa) * 2 ** q.exp2;
  return q.exp10 >= 0 ? m * 10 ** q.exp10 : m / 10 ** -q.exp10;
}

/** Parses to a float in base units (approximateValue), or undefined if invalid. */
export function parseApproximate(input: unknown): number | undefined {
  const q = parseQuantity(input);
  return q === undefined ? undefined : approximateValue(q);
}

/** cpu in millicores for a runtime limit or share: 0 when absent, invalid or not positive. */
export function cpuMillisOrZero(input: unknown): number {
  const v = parseCpuMillis(input);
  return v === undefined || v <= 0 ? 0 : v;
}

/** Memory (or any integer resource) in base units for a limit: 0 when absent, invalid or not positive. */
export function unitValueOrZero(input: unknown): number {
  const v = parseBytes(input);
  return v === undefined || v <= 0 ? 0 : v;
}
