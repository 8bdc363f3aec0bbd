/**
 * How the kubelet's eviction messages print amounts: apimachinery `resource.Quantity.String()`
 * for whole numbers, in the quantity's format.
 *   - BinarySI (bytes): the value with every factor of 1024 taken out as Ki/Mi/Gi/Ti/Pi/Ei
 *     (104857600 → "100Mi", 1572864 → "1536Ki", 1536 → "1536"); values with |v| < 1024 print
 *     as DecimalSI (Go does the same: "This avoids rounding and hopefully confusion").
 *   - DecimalSI (inodes, pids, quantities written without a binary suffix): factors of 1000 as
 *     k/M/G/T/P/E (2000 → "2k", 1500 → "1500", 100000000 → "100M").
 * Pure. Inputs are safe integers (bytes on any real node are).
 */

export type QuantityFormat = 'BinarySI' | 'DecimalSI';

const BINARY = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'] as const;
const DECIMAL = ['', 'k', 'M', 'G', 'T', 'P', 'E'] as const;

export function formatQuantity(value: number, format: QuantityFormat): string {
  const v = Math.trunc(value);
  if (v === 0) return '0';
  const sign = v < 0 ? '-' : '';
  let n = Math.abs(v);
  if (format === 'BinarySI' && n >= 1024) {
    let i = 0;
    while (i < BINARY.length - 1 && n % 1024 === 0) {
      n /= 1024;
      i++;
    }
    return `${sign}${n}${BINARY[i]}`;
  }
  let i = 0;
  while (i < DECIMAL.length - 1 && n % 1000 === 0) {
    n /= 1000;
    i++;
  }
  return `${sign}${n}${DECIMAL[i]}`;
}

/** The format a written quantity keeps: a binary suffix (Ki…Ei) is BinarySI, anything else DecimalSI. */
export function formatOfText(text: string): QuantityFormat {
  return /(Ki|Mi|Gi|Ti|Pi|Ei)$/.test(text.trim()) ? 'BinarySI' : 'DecimalSI';
}
