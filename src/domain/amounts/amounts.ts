/** Exact conversions between decimal strings (API) and atomic units (bigint). No floats anywhere. */
export const DECIMAL_PATTERN = /^(0|[1-9]\d*)(\.\d+)?$/;
/** A decimal string above zero, as a pattern the OpenAPI document carries. */
export const POSITIVE_DECIMAL_PATTERN = /^([1-9]\d*(\.\d+)?|0\.\d*[1-9]\d*)$/;

export function toAtomic(amount: string, decimals: number): bigint {
  if (!DECIMAL_PATTERN.test(amount)) throw new Error(`not a decimal amount: ${amount}`);
  const [whole = '0', frac = ''] = amount.split('.');
  if (frac.length > decimals) throw new Error(`${amount} has more than ${decimals} decimal places`);
  return BigInt(whole) * 10n ** BigInt(decimals) + BigInt(frac.padEnd(decimals, '0') || '0');
}

/** Atomic units to a decimal string with no trailing zeros ("12.5", "0.000001", "3"). */
export function formatAtomic(atomic: bigint | string, decimals: number): string {
  const value = BigInt(atomic);
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const scale = 10n ** BigInt(decimals);
  const whole = abs / scale;
  const frac = (abs % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
}
