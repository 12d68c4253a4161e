import { z } from 'zod';
import { hmacHex, safeEqual } from '../../platform/secrets';

/**
 * The sandbox provider's HTTP contract, in one place: the server answers these shapes and the
 * adapter (src/offramp/http-provider.ts) parses them. Amounts are decimal strings of atomic units.
 */

/** The line the provider's process prints on stdout once it listens (launch.ts waits for it). */
export const READY_PREFIX = 'SANDBOX_PROVIDER_READY ';
export const SIGNATURE_HEADER = 'sandbox-provider-signature';
export const SCENARIO_HEADER = 'sandbox-scenario';
/** How old a callback's timestamp may be (either way) before it is refused as a replay. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

const ZAtomic = z.string().regex(/^(0|[1-9][0-9]{0,77})$/, 'a non-negative integer string');
const ZAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'an address');
const ZTxHash = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'a transaction hash');

export const PAYOUT_SCENARIOS = ['succeed', 'fail', 'timeout', 'error_5xx', 'uncertain', 'return'] as const;
export const QUOTE_SCENARIOS = ['succeed', 'error_5xx', 'expired'] as const;

export const ZQuoteRequest = z.object({
  country: z.string().length(2),
  currency: z.string().min(3).max(3),
  rail: z.string().min(1).max(40),
  asset: z.object({
    symbol: z.string().min(1).max(20),
    decimals: z.number().int().min(0).max(36),
    chainId: z.number().int().positive(),
    tokenAddress: ZAddress,
  }),
  sourceAmountAtomic: ZAtomic,
  sandboxScenario: z.enum(QUOTE_SCENARIOS).optional(),
});
export type TQuoteRequest = z.infer<typeof ZQuoteRequest>;

export const ZQuote = z.object({
  quoteId: z.string(),
  sourceAmountAtomic: ZAtomic,
  providerPrincipalAtomic: ZAtomic,
  providerFeeAtomic: ZAtomic,
  rate: z.string(),
  destinationAmount: z.string(),
  currency: z.string(),
  chainId: z.number().int(),
  tokenAddress: ZAddress,
  depositAddress: ZAddress,
  expiresAt: z.iso.datetime(),
});
export type TQuote = z.infer<typeof ZQuote>;

export const ZBankAccountRequest = z.object({
  bankAccountId: z.string().min(1).max(100),
  country: z.string().length(2),
  currency: z.string().min(3).max(3),
  accountHolderName: z.string().min(1).max(200),
  beneficiaryType: z.enum(['individual', 'business']),
  bankCode: z.string().min(1).max(40),
  accountNumber: z.string().min(1).max(64),
  rail: z.string().min(1).max(40),
  details: z.record(z.string(), z.string()),
});
export type TBankAccountRequest = z.infer<typeof ZBankAccountRequest>;

export const ZBankAccount = z.object({
  bankAccountId: z.string(),
  providerAccountId: z.string(),
  status: z.enum(['pending', 'verified', 'failed']),
  failureReason: z.string().nullable(),
  accountNumberLast4: z.string(),
});
export type TBankAccount = z.infer<typeof ZBankAccount>;

export const ZPayoutRequest = z.object({
  paymentId: z.string().min(1).max(100),
  quoteId: z.string().min(1),
  providerAccountId: z.string().min(1),
  amountAtomic: ZAtomic,
  fundingTxHash: ZTxHash,
  refundAddress: ZAddress,
  sandboxScenario: z.enum(PAYOUT_SCENARIOS).optional(),
});
export type TPayoutRequest = z.infer<typeof ZPayoutRequest>;

/** `uncertain`: the sandbox can't tell where the payout is (until an operator resolves it). */
export const WIRE_PAYOUT_STATUSES = ['submitted', 'processing', 'completed', 'failed', 'returned', 'uncertain'] as const;

export const ZPayout = z.object({
  payoutId: z.string(),
  paymentId: z.string(),
  status: z.enum(WIRE_PAYOUT_STATUSES),
  amountAtomic: ZAtomic,
  reasonCode: z.string().nullable(),
  refundTxHash: ZTxHash.nullable(),
  /** `return` scenario: when the completed payout comes back by itself. */
  returnAt: z.iso.datetime().nullable(),
  updatedAt: z.iso.datetime(),
});
export type TPayout = z.infer<typeof ZPayout>;

export const ZResolveRequest = z.object({ status: z.enum(['completed', 'failed']) });

export const ZProviderError = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

export const ZCallback = z.discriminatedUnion('type', [
  z.object({ id: z.string(), type: z.literal('payout.updated'), createdAt: z.iso.datetime(), data: ZPayout }),
  z.object({ id: z.string(), type: z.literal('bank_account.updated'), createdAt: z.iso.datetime(), data: ZBankAccount }),
]);
export type TCallback = z.infer<typeof ZCallback>;

const hmac = (secret: string, timestamp: number, rawBody: string): string => hmacHex(secret, `${timestamp}.${rawBody}`);

/** The signature header's value for a callback body sent at `timestamp` (unix seconds). */
export function signCallback(secret: string, rawBody: string, timestamp: number): string {
  return `t=${timestamp},v1=${hmac(secret, timestamp, rawBody)}`;
}

export type SignatureCheck = 'ok' | 'missing' | 'malformed' | 'stale' | 'mismatch';

/** Checks a signature header in constant time, and that its timestamp is within the tolerance of `now`. */
export function checkSignature(secret: string, rawBody: string, header: string | undefined, nowSeconds: number): SignatureCheck {
  if (!header) return 'missing';
  const parts = new Map(
    header.split(',').map((p) => {
      const i = p.indexOf('=');
      return [p.slice(0, i).trim(), p.slice(i + 1).trim()] as const;
    }),
  );
  const t = parts.get('t');
  const v1 = parts.get('v1');
  if (!t || !/^[0-9]{1,12}$/.test(t) || !v1 || !/^[0-9a-f]{64}$/.test(v1)) return 'malformed';
  const timestamp = Number(t);
  if (Math.abs(nowSeconds - timestamp) > SIGNATURE_TOLERANCE_SECONDS) return 'stale';
  return safeEqual(hmac(secret, timestamp, rawBody), v1) ? 'ok' : 'mismatch';
}
