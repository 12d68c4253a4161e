import type pg from 'pg';
import { Prisma } from '../../db/client';
import type { Payment, PaymentPayout } from '../../generated/prisma/client';
import type { NewEvent, EventSubject } from '../event-log/events';
import { eventRows } from '../event-log/events';

/**
 * A Payment's creation in plain SQL: the create path is the API's hottest, and here two statements
 * do what took an ORM eight (as profiled). Everything else reads and writes Payments through
 * Prisma; test/payments covers that both agree on every column.
 */

export interface CreateContext {
  recipient: { id: string; displayName: string; logoUrl: string | null };
  profile: { status: string; chainId: number; assetSymbol: string; snapshot: Prisma.JsonValue } | null;
  /** The new Payment's escrow index (taken from the payments sequence, so one address per Payment). */
  escrowIndex: number;
}

/**
 * One round trip: the recipient account of this app, the name a payer is shown (its display profile's,
 * else its payment handle, public and random; the account id should it have none), its settlement
 * profile, and a fresh escrow index.
 */
export async function loadCreateContext(pool: pg.Pool, appId: string, accountId: string): Promise<CreateContext | null> {
  const { rows } = await pool.query(
    `SELECT a.id, COALESCE(a.display_name, ph.handle, a.id) AS display_name, a.logo_url, sp.status, sp.chain_id, sp.asset_symbol, sp.snapshot,
            nextval(pg_get_serial_sequence('payments', 'escrow_index'))::int AS escrow_index
       FROM accounts a
       LEFT JOIN payment_handles ph ON ph.account_id = a.id
       LEFT JOIN settlement_profiles sp ON sp.account_id = a.id
      WHERE a.id = $1 AND a.app_id = $2`,
    [accountId, appId],
  );
  const r = rows[0];
  if (!r) return null;
  return {
    recipient: { id: r.id, displayName: r.display_name, logoUrl: r.logo_url },
    profile: r.status === null ? null : { status: r.status, chainId: r.chain_id, assetSymbol: r.asset_symbol, snapshot: r.snapshot },
    escrowIndex: r.escrow_index,
  };
}

export type NewPayment = Omit<Payment, 'createdAt' | 'updatedAt'>;

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const sqlValue = (v: unknown) =>
  v instanceof Prisma.Decimal ? v.toString() : v !== null && typeof v === 'object' && !(v instanceof Date) ? JSON.stringify(v) : v;

/**
 * Inserts the Payment, registers its escrow address and writes its events in one statement (so one
 * transaction). A Payment id that exists already is a unique violation on payments_pkey (23505).
 */
export async function insertPayment(
  pool: pg.Pool,
  payment: NewPayment,
  custody: { address: string; purpose: string; custodyIndex: number },
  subject: EventSubject,
  events: NewEvent[],
  payout: Omit<PaymentPayout, 'createdAt' | 'updatedAt'> | null = null,
): Promise<Payment> {
  const params: unknown[] = [];
  const param = (v: unknown) => `$${params.push(sqlValue(v))}`;
  const columns = Object.keys(payment) as (keyof NewPayment)[];
  const paymentValues = columns.map((c) => param(payment[c])).join(', ');
  const custodyValues = [custody.address, custody.purpose, custody.custodyIndex].map(param).join(', ');
  const eventValues = eventRows(subject, 'created', events)
    .map(
      (e) =>
        `(${[e.id, e.appId, e.apiVersion, e.accountId, e.resourceType, e.resourceId, e.name, e.payload, e.createdAt].map(param).join(', ')})`,
    )
    .join(', ');
  // A bank Payment's payout row (its quote) is part of the same statement: never one without the other.
  const payoutColumns = payout ? (Object.keys(payout) as (keyof typeof payout)[]) : [];
  const payoutValues = payout ? payoutColumns.map((c) => param(payout[c])).join(', ') : '';
  const { rows } = await pool.query<{ created_at: Date; updated_at: Date }>(
    `WITH payment AS (
       INSERT INTO payments (${columns.map(snake).join(', ')}) VALUES (${paymentValues}) RETURNING created_at, updated_at
     ), custody AS (
       INSERT INTO custody_addresses (address, purpose, custody_index) VALUES (${custodyValues}) ON CONFLICT DO NOTHING
     )${
       payout
         ? `, payout AS (
       INSERT INTO payment_payouts (${payoutColumns.map(snake).join(', ')}) VALUES (${payoutValues})
     )`
         : ''
     }${
       eventValues
         ? `, event AS (
       INSERT INTO events (id, app_id, api_version, account_id, resource_type, resource_id, name, payload, created_at)
       VALUES ${eventValues} ON CONFLICT DO NOTHING
     )`
         : ''
     }
     SELECT created_at, updated_at FROM payment`,
    params,
  );
  return { ...payment, createdAt: rows[0]!.created_at, updatedAt: rows[0]!.updated_at };
}

/** Is this the insert of a Payment id that exists already (a retry of a committed create)? */
export function isDuplicatePayment(err: unknown): boolean {
  return (
    (err as { code?: string; constraint?: string })?.code === '23505' && (err as { constraint?: string }).constraint === 'payments_pkey'
  );
}
