import { z } from 'zod';
import { ZTokenAmount } from '../amounts/token-amount.schemas';
import { ZFinality } from '../chain/finality.schemas';
import { ZEvmAddress } from '../accounts/account.schemas';
import { DECIMAL_PATTERN } from '../amounts/amounts';
import { RETURN_STATUSES } from './fund-return-rules';

const ZReason = z.string().min(1).max(500);

/** POST /v2/payments/{paymentId}/refunds: amount absent = the rest of the Payment not yet refunded. */
export const ZCreateRefund = z.strictObject({
  amount: z.string().regex(DECIMAL_PATTERN, 'a decimal string such as "12.50"').max(40).optional(),
  destinationAddress: ZEvmAddress.optional(),
  reason: ZReason.optional(),
});
export type TCreateRefund = z.output<typeof ZCreateRefund>;

/** POST /v2/payments/{paymentId}/incident-recoveries (and the admin twin, which adds reason and actor). */
export const ZIncidentId = z
  .string()
  .regex(/^incident_[A-Za-z0-9_-]+$/, 'an incident id (incident_...)')
  .max(64);
export const ZCreateRecovery = z.strictObject({
  incidentId: ZIncidentId,
  destinationAddress: ZEvmAddress.optional(),
  reason: ZReason.optional(),
});
export type TCreateRecovery = z.output<typeof ZCreateRecovery>;

export const ZAdminCreateRecovery = ZCreateRecovery.extend({ reason: ZReason, actor: z.string().min(1).max(200) });

const ZAmount = ZTokenAmount;

/** A refund or a recovery as the API shows it. */
export const ZFundReturn = z.strictObject({
  id: z.string(),
  object: z.enum(['refund', 'incident_recovery']),
  paymentId: z.string(),
  incidentId: z.string().nullable(),
  status: z.enum(RETURN_STATUSES),
  statusVersion: z.number().int(),
  amount: ZAmount,
  destinationAddress: z.string(),
  reason: z.string().nullable(),
  transactionHash: z.string().nullable(),
  failureReason: z.string().nullable(),
  createdAt: z.string(),
  broadcastAt: z.string().nullable(),
  confirmedAt: z.string().nullable(),
  /** Where the returned money stands on chain: its leg (settlement; no incoming transfer). Empty in a create's answer: nothing is sent yet. */
  finality: ZFinality,
});
export type TFundReturn = z.infer<typeof ZFundReturn>;
export const ZFundReturnList = z.strictObject({ items: z.array(ZFundReturn) });
export const ZRefundCreated = z.strictObject({ refund: ZFundReturn });
export const ZIncidentRecoveryCreated = z.strictObject({ incidentRecovery: ZFundReturn });

/** Funds a Payment holds for recovery: its status is that of its latest recovery. */
export const ZIncident = z.strictObject({
  id: z.string(),
  kind: z.string(),
  status: z.string(),
  amount: ZAmount,
  transactionHash: z.string().nullable(),
  fromAddress: z.string().nullable(),
  createdAt: z.iso.datetime(),
});
export const ZIncidentList = z.strictObject({ items: z.array(ZIncident) });
export type TIncidentList = z.infer<typeof ZIncidentList>;
