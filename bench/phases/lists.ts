import os from 'node:os';
import pg from 'pg';
import { createCursorCodec } from '../../src/domain/requests/pagination';
import { resolveServiceSecret } from '../../src/runtime/service-secret';
import type { BenchContext } from '../context';
import type { ListFigures, ListPageP99, ListsP99 } from '../figures';
import { latency, showLatency, type Latency } from '../measure';

/**
 * Lists stay flat (issue 11 item 5): the Payments, deposits and transactions lists are seeded with SQL
 * `generate_series` to 10k rows, then to `rows` (1M by default), and at each size the first page and a
 * deep page (a cursor at the middle of the list) are read through the API `reads` times, unfiltered and
 * with the common filters. The figure is the p99 of each read at the large size over the small one.
 *
 * The seeded rows belong to the bench's own app and account, and are removed at the end (and at the
 * start, after a run that was stopped midway). They are written as the service writes them, with ids of
 * the spec's prefixes (prefix + MARK + 13 digits: the 22 base62 characters of newId) and are history that
 * nothing in the running service acts on, so the worker's periodic passes leave them alone:
 * - Payments are copies of a real Payment the API just created, in terminal statuses only (an open one
 *   would be an orphan to the payment reconciliation, which starts its workflow), with negative escrow
 *   indexes (never a derived key, the custody sequence untouched) and escrow addresses of their own;
 * - deposits are settled (one in 20 reversed) at a deposit address of their own (negative custody
 *   index, not in custody_addresses, so the ledger reconciliation doesn't compare it with the chain),
 *   all more than 8 days old (the deposit reconciliation re-verifies those settled in the last 7 days);
 * - each deposit has its receipt posting (custody +gross, external -gross) and the account's received
 *   Transaction: what the transactions list reads. The settlement leg is left out: its fee books are
 *   compared with the fee wallets' on-chain balances.
 */
const MARK = 'BenchList';
const token = (n: string) => `'${MARK}' || lpad((${n})::text, 13, '0')`;
/** Seeded history ends 8 days ago; two rows share each created_at (the id breaks the tie), 61 s apart. */
const ROW = `
  generate_series($1::int, $2::int) g
  CROSS JOIN LATERAL (SELECT
    ${token('g')} AS token,
    $3::timestamptz - interval '8 days' - (g / 2) * interval '61 seconds' AS at,
    (1 + g % 1000)::numeric * 1000000 AS amount) s`;

export interface ListsOptions {
  rows: number;
  reads: number;
}

interface ListCase {
  list: keyof ListFigures;
  /** The filters, as the API takes them ('' for none). */
  filter: string;
  path: string;
  /** The rows the list reads, with its filters (SQL). */
  where: string;
  table: string;
}

export async function listsPhase(ctx: BenchContext, opts: ListsOptions): Promise<void> {
  const db = new pg.Client({ connectionString: ctx.service.database.url });
  await db.connect();
  const network = ctx.service.environments.environments.sandbox.networks.find((n) => n.chainId === ctx.network.chainId)!;
  const seeding = {
    app: ctx.appId,
    account: ctx.accountId,
    apiVersion: ctx.service.environments.apiVersion,
    network,
    fees: ctx.service.environments.environments.sandbox.fees,
    template: (await ctx.createPayment()).payment.id as string,
    now: new Date().toISOString(),
  };
  const [app, account] = [db.escapeLiteral(ctx.appId), db.escapeLiteral(ctx.accountId)];
  const codec = createCursorCodec(resolveServiceSecret(ctx.service.config.serviceSecret, ctx.service.dataDir));
  const cases: ListCase[] = [
    ...['', 'limit=100', 'status=succeeded', 'status=failed'].map((filter) => ({
      list: 'payments' as const,
      filter,
      path: '/v2/payments',
      table: 'payments',
      where: `app_id = ${app}${filter.startsWith('status=') ? ` AND status = '${filter.slice(7)}'` : ''}`,
    })),
    ...['', 'limit=100', 'status=settled', 'status=reversed'].map((filter) => ({
      list: 'deposits' as const,
      filter,
      path: `/v2/accounts/${ctx.accountId}/deposits`,
      table: 'deposits',
      where: `app_id = ${app} AND account_id = ${account}${filter.startsWith('status=') ? ` AND status = '${filter.slice(7)}'` : ''}`,
    })),
    ...['', 'limit=100', 'status=posted', 'status=reversed'].map((filter) => ({
      list: 'transactions' as const,
      filter,
      path: `/v2/accounts/${ctx.accountId}/transactions`,
      table: 'ledger_transactions',
      where: `account_id = ${account}${filter.startsWith('status=') ? ` AND status = '${filter.slice(7)}'` : ''}`,
    })),
  ];
  const sizes = [...new Set([Math.min(10_000, opts.rows), opts.rows])];
  const measured = new Map<string, Latency>();
  const seedSeconds: Record<string, number> = {};
  try {
    await removeSeeded(db);
    let seeded = 0;
    for (const size of sizes) {
      const t0 = performance.now();
      const took = await seed(db, seeding, seeded + 1, size);
      seeded = size;
      seedSeconds[label(size)] = Math.round((performance.now() - t0) / 100) / 10;
      const split = Object.entries(took)
        .map(([k, v]) => `${k} ${v} s`)
        .join(', ');
      ctx.out(
        `lists: seeded ${label(size)} Payments, deposits and transactions in ${seedSeconds[label(size)]} s (${split}; load average ${os.loadavg()[0]!.toFixed(1)})`,
      );
      for (const c of cases) {
        for (const page of ['first', 'deep'] as const) {
          const query = new URLSearchParams(c.filter);
          const deep = page === 'deep' ? await deepCursor(ctx, db, codec, c) : undefined;
          if (deep) query.set('cursor', deep.cursor);
          const path = `${c.path}${query.size ? `?${query}` : ''}`;
          const samples: number[] = [];
          for (let i = 0; i < opts.reads; i += 1) {
            const t = performance.now();
            await ctx.api(path);
            samples.push(performance.now() - t);
          }
          const l = latency(samples);
          measured.set(`${c.list} ${c.filter} ${page} ${size}`, l);
          const sql = await explainRead(db, c, deep?.position);
          ctx.out(
            `lists: ${c.list.padEnd(12)} ${(c.filter || 'default').padEnd(16)} ${page.padEnd(5)} ${label(size).padStart(4)}   ${showLatency(l)}   query ${sql.ms} ms (planning ${sql.planMs} ms), ${sql.hit} buffers hit, ${sql.read} read`,
          );
        }
      }
    }
  } finally {
    const t0 = performance.now();
    await removeSeeded(db);
    ctx.out(`lists: seeded rows removed in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    await db.end();
  }

  const [small, large] = [sizes[0]!, sizes.at(-1)!];
  const p99Of = (c: ListCase, page: 'first' | 'deep'): ListPageP99 => {
    const a = measured.get(`${c.list} ${c.filter} ${page} ${small}`)!.p99Ms;
    const b = measured.get(`${c.list} ${c.filter} ${page} ${large}`)!.p99Ms;
    return { [label(small)]: a, [label(large)]: b, ratio: Math.round((b / a) * 100) / 100 };
  };
  const lists: Partial<ListFigures> = {};
  for (const c of cases) {
    const pages = { first: p99Of(c, 'first'), deep: p99Of(c, 'deep') };
    const list = (lists[c.list] ??= { ...pages, filtered: {} });
    if (c.filter) list.filtered[c.filter] = pages;
    for (const page of ['first', 'deep'] as const) {
      const p50 = (size: number) => measured.get(`${c.list} ${c.filter} ${page} ${size}`)!.p50Ms;
      const over = pages[page].ratio > 1.5 ? '  (over 1.5)' : '';
      ctx.out(
        `lists: ${label(large)}/${label(small)} ${c.list} ${c.filter || 'default'} ${page}: p99 ${pages[page].ratio}${over}, p50 ${(p50(large) / p50(small)).toFixed(2)}`,
      );
    }
  }
  const figures: ListsP99 = { reads: opts.reads, seedSeconds, ...(lists as ListFigures) };
  ctx.figures.listP99 = figures;
}

const label = (n: number) =>
  n >= 1_000_000 && n % 1_000_000 === 0 ? `${n / 1_000_000}M` : n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : String(n);

/**
 * A cursor at the middle of the list, made as the API makes it: its scope read from a cursor the API
 * issued for the same list and filters (untimed), its position the row half-way down, in list order.
 */
async function deepCursor(
  ctx: BenchContext,
  db: pg.Client,
  codec: ReturnType<typeof createCursorCodec>,
  c: ListCase,
): Promise<{ cursor: string; position: { t: Date; id: string } }> {
  const query = new URLSearchParams(c.filter);
  query.set('limit', '1');
  const issued = (await ctx.api(`${c.path}?${query}`)).nextCursor as string;
  const scope = (JSON.parse(Buffer.from(issued.split('.')[0]!, 'base64url').toString('utf8')) as { s: string }).s;
  const { rows } = await db.query<{ created_at: Date; id: string }>(
    `SELECT created_at, id FROM ${c.table} WHERE ${c.where} ORDER BY created_at DESC, id DESC
     OFFSET (SELECT count(*) / 2 FROM ${c.table} WHERE ${c.where}) LIMIT 1`,
  );
  const position = { t: rows[0]!.created_at, id: rows[0]!.id };
  return { cursor: codec.encode(scope, { t: position.t.toISOString(), id: position.id }), position };
}

/**
 * The database's part of one read: EXPLAIN (ANALYZE, BUFFERS) of the SQL the list function sends
 * (one table, its filters, the cursor's bound, newest first), so that a growth of the request's time
 * with the size can be told apart from a growth of the query's.
 */
async function explainRead(
  db: pg.Client,
  c: ListCase,
  position?: { t: Date; id: string },
): Promise<{ ms: number; planMs: number; hit: number; read: number }> {
  const limit = (c.filter === 'limit=100' ? 100 : c.list === 'payments' ? 20 : 50) + 1;
  const bound = position ? ` AND created_at <= $1 AND (created_at < $1 OR id < $2)` : '';
  const { rows } = await db.query(
    `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT * FROM ${c.table} WHERE ${c.where}${bound} ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
    position ? [position.t, position.id] : [],
  );
  const plan = (
    rows[0] as {
      'QUERY PLAN': Array<{
        'Execution Time': number;
        'Planning Time': number;
        Plan: { 'Shared Hit Blocks': number; 'Shared Read Blocks': number };
      }>;
    }
  )['QUERY PLAN'][0]!;
  const ms = (v: number) => Math.round(v * 100) / 100;
  return {
    ms: ms(plan['Execution Time']),
    planMs: ms(plan['Planning Time']),
    hit: plan.Plan['Shared Hit Blocks'],
    read: plan.Plan['Shared Read Blocks'],
  };
}

interface Seeding {
  app: string;
  account: string;
  apiVersion: string;
  network: { chainId: number; code: string; assets: Array<{ symbol: string; tokenAddress: string; decimals: number }> };
  fees: { platformFeeBps: number; partnerFeeBps: number };
  template: string;
  now: string;
}

const depositAddressId = `deposit_addr_${MARK}${'0'.repeat(13)}`;

/** Rows from..to (1-based) of every seeded table, each one INSERT ... SELECT; returns the seconds each took. */
async function seed(db: pg.Client, s: Seeding, from: number, to: number): Promise<Record<string, number>> {
  const range = [from, to, s.now];
  const took: Record<string, number> = {};
  let t0 = performance.now();
  const lap = (name: string) => {
    took[name] = Math.round((performance.now() - t0) / 100) / 10;
    t0 = performance.now();
  };
  const asset = s.network.assets[0]!;
  // Payments: copies of the template (every column the service wrote), with their own identity, times and terminal status.
  const { rows: columns } = await db.query<{ name: string }>(
    `SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'payments' ORDER BY ordinal_position`,
  );
  const status = `(ARRAY['succeeded','succeeded','succeeded','succeeded','succeeded','succeeded','expired','expired','cancelled','failed'])[1 + g % 10]`;
  const overrides: Record<string, string> = {
    id: `'payment_' || s.token`,
    status,
    status_version: `CASE ${status} WHEN 'succeeded' THEN 4 ELSE 2 END`,
    escrow_index: '-g',
    escrow_address: `'0xb1' || lpad(to_hex(g), 38, '0')`,
    next_action_id: `'action_' || s.token`,
    request_hash: 'NULL',
    external_reference: `'order-' || g`,
    received_atomic: `CASE ${status} WHEN 'succeeded' THEN t.amount_atomic ELSE 0 END`,
    pending_atomic: '0',
    expires_at: 's.at + (t.expires_at - t.created_at)',
    accepted_at: `CASE ${status} WHEN 'succeeded' THEN s.at + interval '1 minute' END`,
    succeeded_at: `CASE ${status} WHEN 'succeeded' THEN s.at + interval '2 minutes' END`,
    cancelled_at: `CASE ${status} WHEN 'cancelled' THEN s.at + interval '5 minutes' END`,
    created_at: 's.at',
    updated_at: `s.at + interval '2 minutes'`,
  };
  await db.query(
    `INSERT INTO payments (${columns.map((c) => `"${c.name}"`).join(', ')})
     SELECT ${columns.map((c) => overrides[c.name] ?? `t."${c.name}"`).join(', ')}
     FROM payments t CROSS JOIN ${ROW} WHERE t.id = $4`,
    [...range, s.template],
  );
  lap('payments');

  await db.query(
    `INSERT INTO deposit_addresses (id, app_id, account_id, chain_id, network_code, asset_symbol, token_address, decimals, custody_index, address, status, platform_fee_bps, partner_fee_bps, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, -1, '0xb2' || lpad('1', 38, '0'), 'active', $9, $10, $11::timestamptz - interval '1 year', $11::timestamptz - interval '1 year')
     ON CONFLICT (id) DO NOTHING`,
    [
      depositAddressId,
      s.app,
      s.account,
      s.network.chainId,
      s.network.code,
      asset.symbol,
      asset.tokenAddress,
      asset.decimals,
      s.fees.platformFeeBps,
      s.fees.partnerFeeBps,
      s.now,
    ],
  );
  const deposit = `CASE WHEN g % 20 = 0 THEN 'reversed' ELSE 'settled' END`;
  const fee = (bps: string) => `floor(s.amount * a.${bps} / 10000)`;
  await db.query(
    `INSERT INTO deposits (id, app_id, api_version, account_id, deposit_address_id, status, status_version, chain_id, token_address, asset_symbol, decimals,
       tx_hash, log_index, ordinal, workflow_id, block_number, from_address, amount_atomic, platform_fee_bps, partner_fee_bps,
       platform_fee_atomic, partner_fee_atomic, network_fee_atomic, setup_fee_atomic, net_atomic, settlement_status, settlement_tx_hash, settled_at,
       settlement_attempts, settlement_profile_snapshot, reversed_at, created_at, updated_at)
     SELECT 'deposit_' || s.token, a.app_id, $5, a.account_id, a.id, ${deposit}, CASE WHEN g % 20 = 0 THEN 5 ELSE 4 END, a.chain_id, a.token_address, a.asset_symbol, a.decimals,
       '0xb3' || lpad(to_hex(g), 62, '0'), 0, 0, 'deposit:' || a.chain_id || ':0xb3' || lpad(to_hex(g), 62, '0') || ':' || a.address || ':0', g, '0xb4' || lpad(to_hex(g), 38, '0'),
       s.amount, a.platform_fee_bps, a.partner_fee_bps,
       ${fee('platform_fee_bps')}, ${fee('partner_fee_bps')}, 0, 0, s.amount - ${fee('platform_fee_bps')} - ${fee('partner_fee_bps')},
       CASE WHEN g % 20 = 0 THEN 'reversed' ELSE 'confirmed' END, '0xb5' || lpad(to_hex(g), 62, '0'), s.at + interval '1 minute',
       1, coalesce((SELECT snapshot FROM settlement_profiles WHERE account_id = a.account_id AND status = 'active'), '{}'::jsonb),
       CASE WHEN g % 20 = 0 THEN s.at + interval '1 day' END, s.at, s.at + interval '1 minute'
     FROM deposit_addresses a CROSS JOIN ${ROW} WHERE a.id = $4`,
    [...range, depositAddressId, s.apiVersion],
  );
  lap('deposits');

  await withoutTriggers(db, async () => {
    await db.query(
      `INSERT INTO ledger_postings (id, app_id, source_type, source_id, leg, description, fingerprint, created_at)
       SELECT 'posting_' || s.token, $4, 'deposit', 'deposit_' || s.token, 'receipt',
         'Deposit deposit_' || s.token || ' received at deposit address ' || $5, encode(sha256(convert_to('deposit_' || s.token, 'UTF8')), 'hex'), s.at
       FROM ${ROW}`,
      [...range, s.app, depositAddressId],
    );
    await db.query(
      `INSERT INTO ledger_entries (id, posting_id, line, book, account_id, chain_id, token_address, asset_symbol, decimals, amount_atomic, created_at)
       SELECT 'entry_' || ${token('2 * g + k')}, 'posting_' || s.token, k + 1,
         CASE k WHEN 0 THEN 'custody:deposit:' || $5 ELSE 'external:' || $6::int END, CASE k WHEN 0 THEN $4 END,
         $6::int, $7, $8, $9, CASE k WHEN 0 THEN s.amount ELSE -s.amount END, s.at
       FROM ${ROW} CROSS JOIN generate_series(0, 1) k`,
      [...range, s.account, depositAddressId, s.network.chainId, asset.tokenAddress, asset.symbol, asset.decimals],
    );
    await db.query(
      `INSERT INTO ledger_transactions (id, posting_id, account_id, direction, sender_account_id, receiver_account_id, chain_id, token_address, asset_symbol, decimals,
         amount_atomic, status, financial_leg_kind, payment_id, description, created_at, updated_at)
       SELECT 'txn_' || s.token, 'posting_' || s.token, $4, 'received', NULL, $4, $5, $6, $7, $8,
         s.amount, CASE WHEN g % 20 = 0 THEN 'reversed' ELSE 'posted' END, 'deposit', NULL, NULL, s.at, s.at + interval '1 minute'
       FROM ${ROW}`,
      [...range, s.account, s.network.chainId, asset.tokenAddress, asset.symbol, asset.decimals],
    );
  });
  lap('ledger');
  // As autovacuum would soon after (and not during the reads): statistics and the visibility map as in steady state.
  await db.query('VACUUM ANALYZE payments, deposits, deposit_addresses, ledger_postings, ledger_entries, ledger_transactions');
  lap('vacuum');
  // The seed's dirty pages written out now, and autovacuum left to finish, so the reads that follow
  // measure the lists, not the checkpointer or autovacuum catching up with the seed.
  await db.query('CHECKPOINT');
  lap('checkpoint');
  for (let i = 0; i < 120; i += 1) {
    const { rows } = await db.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'`,
    );
    if (rows[0]!.n === '0') break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  lap('autovacuum');
  return took;
}

/**
 * One transaction with `session_replication_role = replica`, so that no trigger fires: neither the
 * ledger's (the append-only guard, and the deferred balance check of every posting and entry at COMMIT,
 * 0.9 ms a posting: 15 minutes for 1M) nor the foreign-key checks. For the seed, whose postings
 * balance and whose references exist by construction, and for removing it. Needs a superuser (the
 * embedded PostgreSQL's `postgres`).
 */
async function withoutTriggers(db: pg.Client, run: () => Promise<void>): Promise<void> {
  await db.query('BEGIN');
  try {
    await db.query(`SET LOCAL session_replication_role = replica`);
    await run();
    await db.query('COMMIT');
  } catch (err) {
    await db.query('ROLLBACK');
    throw err;
  }
}

/** Every seeded row, by its id's mark. */
async function removeSeeded(db: pg.Client): Promise<void> {
  const like = (prefix: string) => `LIKE '${prefix}\\_${MARK}%'`;
  await withoutTriggers(db, async () => {
    await db.query(`DELETE FROM ledger_transactions WHERE id ${like('txn')}`);
    await db.query(`DELETE FROM ledger_entries WHERE id ${like('entry')}`);
    await db.query(`DELETE FROM ledger_postings WHERE id ${like('posting')}`);
    await db.query(`DELETE FROM deposits WHERE deposit_address_id = $1`, [depositAddressId]);
    await db.query(`DELETE FROM deposit_addresses WHERE id = $1`, [depositAddressId]);
    await db.query(`DELETE FROM payments WHERE id ${like('payment')}`);
  });
  await db.query('VACUUM ANALYZE payments, deposits, deposit_addresses, ledger_postings, ledger_entries, ledger_transactions');
}
