import { z } from 'zod';

/**
 * Request values that must be one the app's environment offers (checked against its configuration,
 * past the schema): the OpenAPI document lists the environments' values for each of these schemas.
 */

/** An asset as a request names it (assetCode, assetSymbol): a symbol of one of the environment's networks. */
export const ZAssetSymbol = z.string().min(1).max(16);

/** The fiat currency a public Payment shows beside its amount: one of the environment's allowedFiatCurrencies. */
export const ZFiatCurrency = z.string().regex(/^[A-Z]{3}$/, 'an ISO 4217 code');
