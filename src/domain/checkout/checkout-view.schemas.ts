import { z } from 'zod';

/**
 * The payer's phases on the hosted checkout, in the order a paid Payment goes through them, then the
 * ends where it stops short. One Payment state maps to exactly one (checkoutPhaseOf).
 */
export const CHECKOUT_PHASES = [
  'awaiting_payment',
  'seen',
  'confirming',
  'underpaid',
  'accepted',
  'succeeded',
  'expired',
  'cancelled',
  'failed',
] as const;
export const ZCheckoutPhase = z.enum(CHECKOUT_PHASES);
export type TCheckoutPhase = z.infer<typeof ZCheckoutPhase>;

const ZAtomic = z.string().regex(/^\d+$/);

/** What the payer may still send, and where: present only in the phases where paying makes sense. */
export const ZCheckoutPayable = z.strictObject({
  address: z.string(),
  amount: z.string(),
  amountAtomic: ZAtomic,
  /** EIP-681 ERC-20 transfer URI of exactly this amount to this address (the QR code's text). */
  uri: z.string(),
});

/** GET /checkout/{paymentId}/status: what changes on the page while the payer watches it. */
export const ZCheckoutStatus = z.strictObject({
  paymentId: z.string(),
  phase: ZCheckoutPhase,
  statusVersion: z.number().int(),
  amount: z.string(),
  amountAtomic: ZAtomic,
  assetCode: z.string(),
  /** Funds seen for the Payment (confirmed and still confirming), counted against the amount. */
  receivedAmount: z.string(),
  payable: ZCheckoutPayable.nullable(),
  expiresAt: z.string(),
  /** Where the page sends the payer once the Payment succeeded (the partner's returnUrl), or null. */
  returnUrl: z.string().nullable(),
  /** How deep the payer's transfers are (the least deep of them), or null before any is seen: the page's progress bar. */
  confirmations: z
    .strictObject({
      confirmations: z.number().int().min(0),
      confirmationsRequired: z.number().int().min(1),
      finalized: z.boolean(),
      estimatedFinalAt: z.string().nullable(),
    })
    .nullable(),
});
export type TCheckoutStatus = z.infer<typeof ZCheckoutStatus>;

/** The whole page: the status plus what never changes (recipient, network, token). */
export const ZCheckoutPage = z.strictObject({
  status: ZCheckoutStatus,
  recipient: z.strictObject({ displayName: z.string().min(1), logoUrl: z.string().nullable() }),
  description: z.string().nullable(),
  network: z.strictObject({ name: z.string(), chainId: z.number().int() }),
  tokenAddress: z.string(),
  decimals: z.number().int(),
});
export type TCheckoutPage = z.infer<typeof ZCheckoutPage>;

/** POST /checkout/{paymentId}/session: the partner's front end hands over the payer's credentials (form or JSON). */
export const ZCheckoutSessionRequest = z.strictObject({
  /** A client access token from POST /v2/client/auth/exchange (a compact JWS). */
  clientToken: z.string().regex(/^[A-Za-z0-9_-]{1,1024}\.[A-Za-z0-9_-]{1,2048}\.[A-Za-z0-9_-]{1,512}$/, 'a client access token'),
  /** The Payment's checkout.clientSecret. */
  clientSecret: z.string().regex(/^payment_[A-Za-z0-9_-]{1,64}_secret_[0-9a-f]{40}$/, "the Payment's checkout.clientSecret"),
});
export type TCheckoutSessionRequest = z.infer<typeof ZCheckoutSessionRequest>;

/** GET /checkout/{paymentId}/vault: the Vault option as the page shows it, and the session's CSRF token. */
export const ZCheckoutVault = z.strictObject({
  /** none: this payer's vault can't pay it; available: "Pay from Vault"; processing / completed: under way / done. */
  state: z.enum(['none', 'available', 'processing', 'completed']),
  displayName: z.string().nullable(),
  csrfToken: z.string(),
});
export type TCheckoutVault = z.infer<typeof ZCheckoutVault>;
