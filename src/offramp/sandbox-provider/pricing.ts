/**
 * The sandbox's fixed prices: rates per fiat currency for one unit of a USD stablecoin, and its fee.
 * Integer arithmetic only (amounts are bigint atomic units; rates are exact decimal strings).
 */

export interface CurrencyRate {
  /** Fiat per 1 unit of the stablecoin, an exact decimal string. */
  rate: string;
  /** Minor-unit digits of the fiat currency. */
  decimals: number;
}

export const SANDBOX_RATES: Record<string, CurrencyRate> = {
  USD: { rate: '1', decimals: 2 },
  PHP: { rate: '58.2', decimals: 2 },
  VND: { rate: '25400', decimals: 0 },
};

/** 0.5 % of the source amount, at least 0.50 of the asset. */
export const FEE_BPS = 50n;
const MIN_FEE_CENTS = 50n;

export function providerFeeAtomic(sourceAtomic: bigint, assetDecimals: number): bigint {
  const proportional = (sourceAtomic * FEE_BPS + 9_999n) / 10_000n; // rounded up
  const minimum = (MIN_FEE_CENTS * 10n ** BigInt(assetDecimals)) / 100n;
  return proportional > minimum ? proportional : minimum;
}

/** principal (atomic units of the asset) converted at `rate`, rounded down to the fiat's minor unit. */
export function destinationAmount(principalAtomic: bigint, assetDecimals: number, currency: CurrencyRate): string {
  const [whole, fraction = ''] = currency.rate.split('.');
  const rateScaled = BigInt(`${whole}${fraction}`);
  const minor =
    (principalAtomic * rateScaled * 10n ** BigInt(currency.decimals)) / (10n ** BigInt(fraction.length) * 10n ** BigInt(assetDecimals));
  if (currency.decimals === 0) return minor.toString();
  const digits = minor.toString().padStart(currency.decimals + 1, '0');
  return `${digits.slice(0, -currency.decimals)}.${digits.slice(-currency.decimals)}`;
}
