import { z } from 'zod';
import { RESOLUTION_ACTIONS } from './pure/operator-resolution';
import { ZPaymentId } from '../payments/payment.schemas';

/** The ids of what an operator can release, by kind (the console's paths and the admin API's). */
export const ZHeldId = {
  payment: ZPaymentId,
  deposit: z
    .string()
    .regex(/^deposit_[A-Za-z0-9]+$/, 'a deposit id (deposit_...)')
    .max(64),
  fund_return: z
    .string()
    .regex(/^(refund|recovery)_[A-Za-z0-9_-]+$/, 'a refund or incident recovery id (refund_... or recovery_...)')
    .max(64),
} as const;

/** An operator's resolution over the admin API: what, why and who (the CLI takes the same as flags). */
export const ZAdminResolve = z
  .strictObject({
    action: z.enum(RESOLUTION_ACTIONS),
    txHash: z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/, 'a 0x… transaction hash (64 hex digits)')
      .optional(),
    reason: z.string().trim().min(1).max(500).optional(),
    actor: z.string().trim().min(1).max(200),
  })
  .refine((v) => v.action !== 'mark-settled' || v.txHash !== undefined, {
    path: ['txHash'],
    message: 'mark-settled needs the transaction hash of the payout',
  })
  .refine((v) => v.action !== 'fail' || v.reason !== undefined, { path: ['reason'], message: 'fail needs a reason' });
export type TAdminResolve = z.infer<typeof ZAdminResolve>;
