import { z } from 'zod';
import { ZPageQuery } from '../requests/pagination';

export const ALERT_SEVERITIES = ['critical', 'warning'] as const;
export type AlertSeverity = (typeof ALERT_SEVERITIES)[number];

/** The kinds raised today; the column is free text so a new kind needs no migration. */
export const ALERT_KINDS = [
  'ledger_difference',
  'payment_workflow_missing',
  'settlement_dropped',
  'deposit_unrecorded',
  'gas_treasury_empty',
  'operator_sign_in_throttled',
  'return_destination_refused',
] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

export const ZAlertId = z
  .string()
  .regex(/^alert_[A-Za-z0-9]+$/, 'an alert id (alert_...)')
  .max(64);

/** `GET /admin/v1/alerts` and `alerts list`: newest first. */
export const ZListAlerts = ZPageQuery({ max: 100, default: 50 }).extend({
  open: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional(),
  kind: z.enum(ALERT_KINDS).optional(),
});
export type TListAlerts = z.output<typeof ZListAlerts>;

export interface OperatorAlertView {
  id: string;
  kind: string;
  severity: AlertSeverity;
  subject: string;
  details: unknown;
  createdAt: string;
  updatedAt: string;
  resolvedAt: string | null;
}
