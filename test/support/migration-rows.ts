import type pg from 'pg';
import { SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { ID_PREFIXES } from '../../src/domain/values/ids';

/**
 * Rows for every table of a database at whatever migration it is, read from its catalog: the upward
 * migration test (test/db/migrations-upward.test.ts) writes a batch at each migration before applying
 * the next. Values look like the service's (prefixed ids, hex addresses and hashes, amounts in atomic
 * units, JSON of the shapes it writes) and respect the schema of the moment: NOT NULL, defaults,
 * foreign keys (parents first, from the same batch), unique indexes (distinct values) and CHECK lists.
 * Half of a batch sets every nullable column and column with a default; the other half leaves them
 * NULL or to their default. Rows come in pairs that share their values wherever no unique index forbids
 * it, as real data repeats itself, so a new unique index over a repeated column fails as it would in
 * production.
 */

export interface Column {
  name: string;
  /** information_schema data_type (ARRAY and USER-DEFINED with udt). */
  type: string;
  udt: string;
  nullable: boolean;
  default: string | null;
}

interface ForeignKey {
  columns: string[];
  refTable: string;
  refColumns: string[];
  /** No constraint: a `<thing>_id` column naming another table's rows. */
  soft?: boolean;
}

export interface Table {
  name: string;
  columns: Column[];
  primaryKey: string[];
  foreignKeys: ForeignKey[];
  /** Column sets of the unique indexes (primary key, partial and expression indexes included). */
  uniques: string[][];
  /** Allowed values of a column from a CHECK (col IN (...)). */
  allowed: Map<string, string[]>;
  enums: Map<string, string[]>;
}

export type Row = Record<string, unknown>;

const MIGRATIONS_TABLE = '_prisma_migrations';

export async function readCatalog(client: pg.Client): Promise<Map<string, Table>> {
  const tables = new Map<string, Table>();
  const columns = await client.query<{
    table_name: string;
    column_name: string;
    data_type: string;
    udt_name: string;
    is_nullable: string;
    column_default: string | null;
  }>(
    `SELECT c.table_name, c.column_name, c.data_type, c.udt_name, c.is_nullable, c.column_default
     FROM information_schema.columns c
     JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
     WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE' AND c.table_name <> $1
     ORDER BY c.table_name, c.ordinal_position`,
    [MIGRATIONS_TABLE],
  );
  for (const c of columns.rows) {
    let t = tables.get(c.table_name);
    if (!t) {
      t = { name: c.table_name, columns: [], primaryKey: [], foreignKeys: [], uniques: [], allowed: new Map(), enums: new Map() };
      tables.set(c.table_name, t);
    }
    t.columns.push({
      name: c.column_name,
      type: c.data_type,
      udt: c.udt_name,
      nullable: c.is_nullable === 'YES',
      default: c.column_default,
    });
  }

  const constraints = await client.query<{
    table: string;
    contype: string;
    def: string;
    columns: string[];
    ref_table: string | null;
    ref_columns: string[];
  }>(
    `SELECT rel.relname AS table, con.contype, pg_get_constraintdef(con.oid) AS def,
       ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.i) AS columns,
       frel.relname AS ref_table,
       ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.i) AS ref_columns
     FROM pg_constraint con JOIN pg_class rel ON rel.oid = con.conrelid LEFT JOIN pg_class frel ON frel.oid = con.confrelid
     WHERE rel.relnamespace = 'public'::regnamespace AND con.contype IN ('p', 'f', 'c')`,
  );
  for (const c of constraints.rows) {
    const t = tables.get(c.table);
    if (!t) continue;
    if (c.contype === 'p') t.primaryKey = c.columns;
    if (c.contype === 'f' && c.ref_table) t.foreignKeys.push({ columns: c.columns, refTable: c.ref_table, refColumns: c.ref_columns });
    if (c.contype === 'c') {
      for (const m of c.def.matchAll(/\(?(\w+) = ANY \(\(?ARRAY\[([^\]]*)\]/g)) {
        t.allowed.set(
          m[1]!,
          [...m[2]!.matchAll(/'((?:[^']|'')*)'::/g)].map((v) => v[1]!.replace(/''/g, "'")),
        );
      }
    }
  }

  const indexes = await client.query<{ table: string; def: string }>(
    `SELECT t.relname AS table, pg_get_indexdef(i.indexrelid) AS def
     FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
     WHERE i.indisunique AND t.relnamespace = 'public'::regnamespace`,
  );
  for (const ix of indexes.rows) {
    const t = tables.get(ix.table);
    const keys = /USING \w+ \((.*?)\)(?: WHERE .*)?$/.exec(ix.def)?.[1];
    if (!t || keys === undefined) continue;
    t.uniques.push(t.columns.map((c) => c.name).filter((name) => new RegExp(`\\b${name}\\b`).test(keys)));
  }

  const enums = await client.query<{ typname: string; labels: string[] }>(
    `SELECT t.typname, ARRAY(SELECT e.enumlabel::text FROM pg_enum e WHERE e.enumtypid = t.oid ORDER BY e.enumsortorder) AS labels
     FROM pg_type t WHERE t.typtype = 'e' AND t.typnamespace = 'public'::regnamespace`,
  );
  const labels = new Map(enums.rows.map((e) => [e.typname, e.labels]));
  for (const t of tables.values()) {
    for (const c of t.columns) if (c.type === 'USER-DEFINED' && labels.has(c.udt)) t.enums.set(c.name, labels.get(c.udt)!);
    t.foreignKeys.push(...softReferences(t, tables));
  }
  return tables;
}

/** Columns that name the service's actors by role rather than by table (recipient_account_id -> accounts). */
const ROLES = ['recipient_', 'sender_', 'receiver_', 'payer_'];

function pluralOf(word: string): string[] {
  return [`${word}s`, word.endsWith('y') ? `${word.slice(0, -1)}ies` : `${word}es`];
}

/** `<thing>_id` text columns without a constraint that name a table's rows: filled from that table. */
function softReferences(t: Table, tables: Map<string, Table>): ForeignKey[] {
  const out: ForeignKey[] = [];
  for (const c of t.columns) {
    if (!c.name.endsWith('_id') || c.type !== 'text' || t.foreignKeys.some((fk) => fk.columns.includes(c.name))) continue;
    if (t.primaryKey.length === 1 && t.primaryKey[0] === c.name) continue;
    const thing = c.name.slice(0, -3);
    const role = ROLES.find((r) => thing.startsWith(r));
    const ref = pluralOf(role ? thing.slice(role.length) : thing).find((name) => tables.get(name)?.columns.some((x) => x.name === 'id'));
    if (ref && ref !== t.name) out.push({ columns: [c.name], refTable: ref, refColumns: ['id'], soft: true });
  }
  return out;
}

/** Parents before children; a soft reference gives way where it would close a cycle. */
export function insertionOrder(tables: Map<string, Table>): Table[] {
  const pending = new Map([...tables.values()].map((t) => [t.name, t]));
  const order: Table[] = [];
  const ready = (t: Table, withSoft: boolean) =>
    t.foreignKeys.every((fk) => fk.refTable === t.name || !pending.has(fk.refTable) || (fk.soft && !withSoft));
  while (pending.size > 0) {
    const next = [...pending.values()].find((t) => ready(t, true)) ?? [...pending.values()].find((t) => ready(t, false));
    if (!next)
      throw new Error(`foreign keys form a cycle among ${[...pending.keys()].join(', ')}: the upward migration test can't order them`);
    order.push(next);
    pending.delete(next.name);
  }
  return order;
}

/** How many rows a batch writes per table: a ledger posting needs two entries that balance. */
const ROWS_PER_BATCH = 4;
const rowsOf = (table: string) => (table === 'ledger_entries' ? 2 * ROWS_PER_BATCH : ROWS_PER_BATCH);

const ID_PREFIX_OF_TABLE: Record<string, string> = {
  apps: ID_PREFIXES.app,
  accounts: ID_PREFIXES.account,
  payments: ID_PREFIXES.payment,
  payment_transfers: ID_PREFIXES.paymentTransfer,
  payment_actions: ID_PREFIXES.nextAction,
  deposits: ID_PREFIXES.deposit,
  deposit_addresses: ID_PREFIXES.depositAddress,
  bank_accounts: ID_PREFIXES.bankAccount,
  payment_handles: ID_PREFIXES.handle,
  connected_wallets: ID_PREFIXES.wallet,
  settlement_profiles: ID_PREFIXES.settlementProfile,
  events: ID_PREFIXES.event,
  webhook_deliveries: ID_PREFIXES.delivery,
  webhook_endpoints: ID_PREFIXES.webhookEndpoint,
  ledger_entries: ID_PREFIXES.ledgerEntry,
  ledger_postings: ID_PREFIXES.ledgerPosting,
  ledger_transactions: ID_PREFIXES.transaction,
  operator_alerts: ID_PREFIXES.operatorAlert,
  vaults: ID_PREFIXES.vault,
  vault_policies: ID_PREFIXES.vaultPolicy,
  vault_audit_events: ID_PREFIXES.vaultAuditEvent,
  vault_approval_codes: ID_PREFIXES.vaultApprovalCode,
  vault_receipts: ID_PREFIXES.vaultReceipt,
  vault_funding_operations: ID_PREFIXES.fundingOperation,
  sandbox_mail_outbox: ID_PREFIXES.sandboxMail,
  fund_returns: ID_PREFIXES.refund,
  operator_actions: ID_PREFIXES.operatorAction,
  operator_approvals: ID_PREFIXES.operatorApproval,
  settlement_legs: 'leg_',
};

/** Text values of columns no CHECK lists, as the service writes them. */
const KNOWN_VALUES: Record<string, string[]> = {
  'payments.status': ['requires_payment_method', 'processing', 'succeeded', 'expired', 'cancelled', 'failed'],
  'payments.intent': ['receive', 'send'],
  'payments.amount_mode': ['fixed', 'open'],
  'payments.operational_state': ['normal', 'retrying', 'requires_intervention'],
  'payments.offramp_status': ['submitted', 'completed'],
  'payments.origin': ['partner', 'public'],
  'payment_transfers.status': ['pending', 'confirmed', 'dropped', 'late'],
  'payment_transfers.role': ['funding', 'duplicate', 'late', 'excess'],
  'payment_incidents.kind': ['late', 'excess', 'duplicate', 'underpaid_expired'],
  'deposits.status': ['detected', 'confirming', 'settling', 'settled', 'failed'],
  'deposits.settlement_status': ['pending', 'confirmed', 'not_required'],
  'accounts.status': ['active', 'suspended'],
  'accounts.subject_type': ['individual', 'business'],
  'webhook_endpoints.status': ['enabled', 'disabled', 'archived'],
  'webhook_deliveries.status': ['pending', 'succeeded', 'abandoned'],
  'idempotency_records.state': ['completed', 'in_progress', 'released'],
  'webhook_attempts.state': ['completed', 'claimed'],
  'settlement_legs.leg': ['net', 'platform_fee', 'partner_fee'],
  'apps.environment': ['sandbox', 'production'],
  'payments.stage': ['awaiting_funds', 'settling'],
  'payment_resolutions.action': ['retry', 'mark-settled', 'fail'],
  'deposit_resolutions.action': ['retry', 'mark-settled', 'fail'],
  'connected_wallets.kind': ['external_wallet'],
  'connected_wallets.ownership_verification_status': ['verified', 'unverified'],
  'connected_wallets.ownership_verification_method': ['signature', 'none'],
  'settlement_profiles.destination_type': ['connected_wallet'],
  'vault_policies.period': ['day', 'week', 'month'],
  'vault_policies.approval_method': ['email_otp'],
  'bank_accounts.rail': ['ach'],
  'bank_accounts.beneficiary_type': ['individual', 'business'],
};

/** Chains the service knows: a column shared by rows takes one of them (a distinct one counts past them). */
const CHAIN_IDS = [31337, 84532, 8453];

/** Hex digits derived from a key (FNV-1a, then mulberry32): the same key, the same value. */
function hexOf(key: string, chars: number): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i += 1) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  let a = h >>> 0;
  let out = '';
  while (out.length < chars) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out += ((t ^ (t >>> 14)) >>> 0).toString(16).padStart(8, '0');
  }
  return out.slice(0, chars);
}

interface Ctx {
  /** Pooled rows share it; distinct columns get a value no other row has. */
  n: number;
  /** The column is in a unique index: n is this row's own. */
  distinct: boolean;
  row: number;
  batch: number;
  /** Hex digits of this table, column and n (rows that share n share them). */
  hex: (chars: number) => string;
}

const BASE_TIME = Date.parse('2026-11-20T08:00:00.000Z');
const address = (ctx: Ctx) => `0x${ctx.hex(40)}`;
const txHash = (ctx: Ctx) => `0x${ctx.hex(64)}`;

function jsonValue(table: string, column: string, ctx: Ctx): unknown {
  const amount = String((ctx.n + 1) * 1_000_000);
  if (column === 'settlement_legs') {
    return [
      {
        leg: 'net',
        to: address(ctx),
        amountAtomic: amount,
        nonce: ctx.n,
        txHash: txHash(ctx),
        serialized: `0x02f8${ctx.hex(120)}`,
        status: 'confirmed',
      },
    ];
  }
  if (column === 'metadata') return { orderId: `ord_${ctx.n}`, channel: 'web' };
  const token = SANDBOX_TOKEN_ADDRESS.toLowerCase();
  if (column === 'allowed_tokens') return [{ chainId: 31337, tokenAddress: token, symbol: 'USDC', decimals: 6 }];
  if (column === 'settlement' || column.endsWith('snapshot')) {
    return {
      destinationType: 'connected_wallet',
      chainId: 31337,
      address: address(ctx),
      assetSymbol: 'USDC',
      tokenAddress: token,
      version: 1,
    };
  }
  if (column === 'payload') return { id: `${ID_PREFIXES.event}${ctx.n}`, type: `${table}.updated`, data: { amountAtomic: amount } };
  return { reason: `${column} of ${table}`, n: ctx.n, amountAtomic: amount };
}

function textValue(table: string, column: string, ctx: Ctx): string {
  const known = KNOWN_VALUES[`${table}.${column}`];
  if (known) return known[ctx.n % known.length]!;
  if (column === 'id') return `${ID_PREFIX_OF_TABLE[table] ?? `${table.replace(/s$/, '')}_`}${ctx.hex(22)}`;
  if (column.endsWith('_id')) return `${column.slice(0, -3)}_${ctx.hex(22)}`;
  if (/(^|_)tx_hash$|^transaction_hash$/.test(column)) return txHash(ctx);
  if (/email/.test(column) || (table === 'sandbox_mail_outbox' && column === 'to_address')) return `ops+${ctx.n}@partner.example`;
  if (column === 'token_address') return SANDBOX_TOKEN_ADDRESS.toLowerCase();
  if (/address$/.test(column)) return address(ctx);
  if (/(hash|fingerprint)$/.test(column)) return ctx.hex(64);
  if (/url$/.test(column)) return `https://partner.example/${table}/${ctx.n}`;
  if (/ciphertext|encrypted/.test(column)) return `v1:${ctx.hex(48)}`;
  if (column === 'serialized') return `0x02f8${ctx.hex(120)}`;
  if (/(_atomic|amount|rate|block_number)$/.test(column)) return String((ctx.n + 1) * 1000);
  if (/last4$/.test(column)) return String(1000 + (ctx.n % 9000));
  if (column === 'api_version') return '2026-11-01';
  if (/asset_(symbol|code)$/.test(column)) return 'USDC';
  if (/currency$/.test(column)) return 'USD';
  if (column === 'country') return 'US';
  if (column === 'status') return 'active';
  if (/^(state|kind|outcome|action|channel)$/.test(column)) return `${column}_${ctx.n}`;
  return `${column.replace(/_/g, ' ')} ${ctx.n}`;
}

function integerValue(column: string, ctx: Ctx): number {
  if (column === 'chain_id') return ctx.distinct ? 31337 + ctx.n : CHAIN_IDS[ctx.n % CHAIN_IDS.length]!;
  if (column === 'decimals' || column.endsWith('_decimals')) return 6;
  if (column.endsWith('_bps')) return 50 + (ctx.n % 50);
  if (/status$|status_code$/.test(column)) return 200;
  return 1 + ctx.n;
}

export function valueOf(table: Table, column: Column, ctx: Ctx): unknown {
  const allowed = table.allowed.get(column.name) ?? table.enums.get(column.name);
  if (allowed?.length) return allowed[ctx.n % allowed.length];
  switch (column.type) {
    case 'text':
    case 'character varying':
      return textValue(table.name, column.name, ctx);
    case 'integer':
    case 'smallint':
      return integerValue(column.name, ctx);
    case 'bigint':
      return String(1000 + ctx.n);
    case 'numeric': {
      // Atomic units: positive (CHECKs say > 0 or <> 0); a posting's two entries balance.
      const amount = BigInt(ctx.n + 1) * 1_000_000n + BigInt(ctx.batch);
      return String(table.name === 'ledger_entries' && column.name === 'amount_atomic' && ctx.row % 2 === 1 ? -amount : amount);
    }
    case 'boolean':
      return ctx.n % 2 === 0;
    case 'timestamp with time zone':
    case 'timestamp without time zone':
      return new Date(BASE_TIME + ctx.n * 60_000).toISOString();
    case 'jsonb':
    case 'json':
      return JSON.stringify(jsonValue(table.name, column.name, ctx));
    case 'ARRAY':
      if (column.udt !== '_text') break;
      return column.name === 'scopes'
        ? ['payments:read', 'payments:write']
        : column.name === 'events'
          ? ['payment.succeeded', 'deposit.settled']
          : [`${column.name} ${ctx.n}`];
    default:
      break;
  }
  throw new Error(
    `no generated value for ${table.name}.${column.name} (${column.type} ${column.udt}): teach test/support/migration-rows.ts this type`,
  );
}

export interface Batch {
  /** Rows written per table, in insertion order. */
  rows: Map<string, Row[]>;
}

/**
 * Writes one batch into every table, parents first, in one transaction (the ledger's balance
 * triggers check at COMMIT). A sparse row a CHECK refuses (one naming several nullable columns) is
 * written full instead.
 */
export async function writeBatch(client: pg.Client, tables: Map<string, Table>, batch: number, counter: { next: number }): Promise<Batch> {
  const written = new Map<string, Row[]>();
  await client.query('BEGIN');
  try {
    for (const table of insertionOrder(tables)) {
      const rows: Row[] = [];
      for (let i = 0; i < rowsOf(table.name); i += 1) {
        const full = i < rowsOf(table.name) / 2;
        const row = rowFor(table, i, batch, full, written, counter);
        await client.query('SAVEPOINT row');
        try {
          await insert(client, table.name, row);
          rows.push(row);
        } catch (err) {
          await client.query('ROLLBACK TO SAVEPOINT row');
          if (full || (err as { code?: string }).code !== '23514') throw describeFailure(table.name, row, err);
          const instead = rowFor(table, i, batch, true, written, counter);
          await insert(client, table.name, instead).catch((again: unknown) => {
            throw describeFailure(table.name, instead, again);
          });
          rows.push(instead);
        }
      }
      written.set(table.name, rows);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
  return { rows: written };
}

function describeFailure(table: string, row: Row, err: unknown): Error {
  return new Error(`generated row refused by ${table}: ${(err as Error).message}\n${JSON.stringify(row)}`, { cause: err });
}

async function insert(client: pg.Client, table: string, row: Row): Promise<void> {
  const names = Object.keys(row);
  const sql = names.length
    ? `INSERT INTO "${table}" (${names.map((n) => `"${n}"`).join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')})`
    : `INSERT INTO "${table}" DEFAULT VALUES`;
  await client.query(sql, Object.values(row));
}

function rowFor(table: Table, i: number, batch: number, full: boolean, written: Map<string, Row[]>, counter: { next: number }): Row {
  const row: Row = {};
  const distinct = new Set(table.uniques.flat());
  // Rows of a pair share a value; a column in a unique index takes one no other row has.
  const pooled = 2 * batch + Math.floor(i / 2);
  // A reference of a unique index made only of references takes its own parent per row.
  const ownParent = (fk: ForeignKey) =>
    table.uniques.some((u) => u.includes(fk.columns[0]!) && u.every((c) => table.foreignKeys.some((f) => f.columns.includes(c))));
  const fromParents = new Set<string>();
  for (const fk of table.foreignKeys) {
    const parents = fk.refTable === table.name ? [] : (written.get(fk.refTable) ?? []);
    const nullable = fk.columns.every((c) => table.columns.find((x) => x.name === c)?.nullable);
    if (parents.length === 0 || (nullable && !full)) {
      if (!nullable && !fk.soft) throw new Error(`${table.name}.${fk.columns.join(',')} needs a ${fk.refTable} row and the batch has none`);
      if (fk.soft) continue;
      for (const c of fk.columns) {
        fromParents.add(c);
        row[c] = null;
      }
      continue;
    }
    const parent = parents[(ownParent(fk) ? i : Math.floor(i / 2)) % parents.length]!;
    fk.columns.forEach((c, k) => {
      row[c] = parent[fk.refColumns[k]!];
      fromParents.add(c);
    });
  }
  for (const column of table.columns) {
    if (fromParents.has(column.name)) continue;
    if (column.default?.startsWith('nextval(')) continue;
    if (!full && (column.nullable || column.default !== null)) {
      if (column.default === null) row[column.name] = null;
      continue;
    }
    const own = distinct.has(column.name);
    const n = own ? counter.next++ : pooled;
    row[column.name] = valueOf(table, column, {
      n,
      distinct: own,
      row: i,
      batch,
      hex: (chars) => hexOf(`${table.name}.${column.name}.${n}`, chars),
    });
  }
  if (table.name === 'ledger_entries' && 'line' in row) row.line = 1 + (i % 2);
  return row;
}
