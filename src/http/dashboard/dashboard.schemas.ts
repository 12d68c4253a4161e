import { z } from 'zod';
import { ZPartnerEmail } from '../../domain/dashboard/partner-users';
import { ZAppId } from '../../domain/webhooks/endpoint.schemas';

/** The partner dashboard's forms (application/x-www-form-urlencoded); each carries its CSRF token. */
export const ZCsrf = z.string().min(1).max(200);

export const ZSignInEmail = z.object({ email: ZPartnerEmail, _csrf: ZCsrf });
export const ZSignInCode = z.object({ email: ZPartnerEmail, code: z.string().trim().max(12), _csrf: ZCsrf });
export const ZSwitchApp = z.object({ appId: ZAppId, _csrf: ZCsrf });
export const ZCsrfOnly = z.object({ _csrf: ZCsrf });

/** A datetime-local value read as UTC (seconds optional), or an ISO 8601 time. */
export const ZSinceUtc = z
  .string()
  .trim()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?Z?$/, 'a date and time')
  .transform((v) => new Date(v.endsWith('Z') ? v : `${v}Z`).toISOString());

/** A fresh emailed code confirms a change to the app's secret: a session alone is not enough. */
const ZFreshCode = z.string().trim().max(16);
export const ZRotateForm = z.object({ overlapHours: z.coerce.number().int().min(0).max(168), code: ZFreshCode, _csrf: ZCsrf });
export const ZRevokeForm = z.object({ confirm: z.string().trim().max(64), code: ZFreshCode, _csrf: ZCsrf });

/** The events filter (GET, no CSRF token); an empty field is absent. */
export const ZEventsFilter = z.object({
  name: z.string().max(100).optional(),
  resourceId: z.string().max(128).optional(),
  cursor: z.string().max(1000).optional(),
});

/** One transaction's bar on a resource page: what the page shows, worded here so the page's script words nothing. */
export const ZFinalityBar = z.strictObject({
  transactionHash: z.string(),
  /** What the transaction is: "Incoming transfer", "Settlement (net)"... */
  label: z.string(),
  confirmations: z.number().int().min(0),
  confirmationsRequired: z.number().int().min(1),
  finalized: z.boolean(),
  /** "n of m confirmations", "(final)" once final, or "not mined yet". */
  text: z.string(),
});
export type TFinalityBar = z.infer<typeof ZFinalityBar>;

/**
 * A resource's bars, and whether they can still change by themselves (live): what the page renders and
 * what its script reads back from GET /dashboard/{payments|deposits}/{id}/finality while live.
 */
export const ZLiveFinality = z.strictObject({ live: z.boolean(), bars: z.array(ZFinalityBar) });
export type TLiveFinality = z.infer<typeof ZLiveFinality>;
