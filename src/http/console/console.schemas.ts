import { z } from 'zod';
import { ZAppId } from '../../domain/webhooks/endpoint.schemas';
import { RESOLUTION_ACTIONS } from '../../domain/operators/pure/operator-resolution';
import { ZListAlerts } from '../../domain/monitoring/alerts.schemas';
import { ZEvmAddress } from '../../domain/accounts/account.schemas';
import { ZIncidentId } from '../../domain/returns/fund-return.schemas';

/** The operator console's forms (application/x-www-form-urlencoded); an empty optional field is absent. */
const blankIsAbsent = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);
const ZCsrf = z.string().min(1).max(200);
/** Why the operator acts: required for every action, recorded in the audit and handed to the workflow. */
const ZWhy = z.string().trim().min(1, 'Say why').max(500);

export const ZConsoleLogin = z.object({ email: z.string().trim().min(1, 'Enter your operator email').max(254), _csrf: ZCsrf });
export const ZConsoleCode = z.object({
  email: z.string().trim().min(1).max(254),
  code: z
    .string()
    .trim()
    .regex(/^\d{6}$/, 'The emailed code is 6 digits'),
  totp: z
    .string()
    .trim()
    .regex(/^\d{6}$/, 'The authenticator code is 6 digits'),
  _csrf: ZCsrf,
});

export const ZConsoleResolve = z
  .object({
    action: z.enum(RESOLUTION_ACTIONS),
    txHash: z.preprocess(
      blankIsAbsent,
      z
        .string()
        .regex(/^0x[0-9a-fA-F]{64}$/, 'a 0x… transaction hash (64 hex digits)')
        .optional(),
    ),
    reason: ZWhy,
    _csrf: ZCsrf,
  })
  .refine((v) => v.action !== 'mark-settled' || v.txHash !== undefined, {
    path: ['txHash'],
    message: 'mark-settled needs the transaction hash of the payout',
  });

export const ZConsoleRecover = z.object({
  incidentId: ZIncidentId,
  destinationAddress: z.preprocess(blankIsAbsent, ZEvmAddress.optional()),
  reason: ZWhy,
  _csrf: ZCsrf,
});

export const ZConsoleCsrfOnly = z.object({ _csrf: ZCsrf });

/** The console's search box (GET, so no CSRF token): an id, an externalReference or a transaction hash. */
export const ZConsoleSearch = z.object({ q: z.string().trim().max(255).default('') });

/** The alerts page: open alerts, of one kind when `kind` is given (a blank one is absent), paged by cursor. */
export const ZConsoleAlerts = z.object({
  kind: z.preprocess(blankIsAbsent, ZListAlerts.shape.kind),
  cursor: z.preprocess(blankIsAbsent, ZListAlerts.shape.cursor),
});

/** Inviting a partner user to an app's dashboard (the operator signed in is the actor). */
export const ZConsoleInvite = z.object({ appId: ZAppId, email: z.string().max(254), role: z.string().max(20), _csrf: ZCsrf });
export const ZConsoleUsersQuery = z.object({ appId: z.preprocess(blankIsAbsent, ZAppId.optional()), done: z.string().max(20).optional() });
