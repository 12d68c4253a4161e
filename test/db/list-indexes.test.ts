import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../../src/generated/prisma/client';
import { authenticateApp, type AuthenticatedApp } from '../../src/domain/apps/apps';
import { listPayments } from '../../src/domain/payments/payments';
import { ZListPaymentsQuery } from '../../src/domain/payments/payment.schemas';
import { listDeposits } from '../../src/domain/deposits/deposits';
import { listBankAccounts } from '../../src/domain/bank-accounts/bank-accounts';
import { ZListBankAccountsQuery } from '../../src/domain/bank-accounts/bank-account.schemas';
import { listVaultAuditEvents } from '../../src/domain/vaults/vault-audit';
import { listEvents } from '../../src/domain/event-log/event-log';
import { ZListEventsQuery } from '../../src/domain/event-log/event-log.schemas';
import { ZListVaultAuditEventsQuery } from '../../src/domain/vaults/vault.schemas';
import { call } from '../support/api-client';
import { listDepositAddresses } from '../../src/domain/deposits/deposit-addresses';
import { ZListDepositAddressesQuery, ZListDepositsQuery } from '../../src/domain/deposits/deposit.schemas';
import { listAccountTransactions } from '../../src/domain/ledger/transactions';
import { ZListTransactionsQuery } from '../../src/domain/ledger/transactions.schemas';
import { listWebhookEndpoints } from '../../src/domain/webhooks/endpoints';
import { listWebhookDeliveries } from '../../src/domain/webhooks/deliveries';
import type { CursorCodec } from '../../src/domain/requests/pagination';
import { getHarness } from '../support/harness';
import { openScratchDatabase, type ScratchDatabase } from '../support/scratch-database';
import { applyMigrations } from '../../src/db/migrate';
import { createPayment, newMerchant, type Merchant } from '../support/fixtures';

/**
 * Every list the API pages reads one index range, newest first, and stops after a page: the index
 * matches its filters and its ORDER BY (created_at DESC, id DESC). Proven on the SQL Prisma really
 * runs: each list function runs on a Prisma client that logs its queries, and each captured query is
 * EXPLAINed with its own parameters. The test tables are tiny, where the planner rightly prefers a
 * sequential scan, or a bitmap scan and a sort of the few rows, so the EXPLAIN runs with
 * `enable_seqscan = off` and `enable_sort = off`. Those only price paths, they forbid none: without an
 * index that yields the order, the plan still has a Sort (or an Incremental Sort, left enabled), and
 * the check fails, as the control test below shows. The plan must use the named index, with no sort.
 * The EXPLAINs run on a scratch database of the same migrations, its tables empty: on the harness's,
 * the plan followed the statistics that the files before this one in the shard had left (with the
 * order shuffled, the account's transactions by paymentId once went through the account index).
 */

interface Captured {
  sql: string;
  params: unknown[];
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

// The cursor's content is the list's business; what matters here is the SQL a next page runs.
const POSITION = { t: '2026-11-22T07:50:00.000Z', id: 'zzz' };
const anyCursor: CursorCodec = { encode: () => 'cursor', decode: () => POSITION };

describe('list queries use an index matching their filters and order', () => {
  let pool: pg.Pool;
  let scratch: ScratchDatabase;
  let explainPool: pg.Pool;
  let logged: PrismaClient;
  let captured: Captured[] = [];
  let merchant: Merchant;
  let app: AuthenticatedApp;
  let harness: Awaited<ReturnType<typeof getHarness>>;
  const h = () => harness;

  before(async () => {
    harness = await getHarness();
    const h = harness;
    merchant = await newMerchant();
    // One Payment, so the Payments list also runs its incidents query.
    assert.equal((await createPayment(merchant, { externalReference: 'order-7' })).status, 201);
    app = (await authenticateApp(h.db.prisma, merchant.cred.appId, merchant.cred.appSecret))!;
    assert.equal((await call(`/v2/accounts/${merchant.accountId}/vault`, { credential: merchant.cred, body: {} })).status, 201);
    pool = new pg.Pool({ connectionString: h.databaseUrl, max: 2 });
    const client = new PrismaClient({ adapter: new PrismaPg(pool), log: [{ emit: 'event', level: 'query' }] });
    client.$on('query', (e) => {
      captured.push({ sql: e.query, params: JSON.parse(e.params) as unknown[] });
    });
    logged = client as unknown as PrismaClient;
    scratch = await openScratchDatabase(h.databaseUrl, 'list_indexes');
    await applyMigrations(scratch.url);
    explainPool = new pg.Pool({ connectionString: scratch.url, max: 1 });
    // An idle client ended by the server (the scratch database dropped WITH (FORCE)) emits on its pool:
    // the queries' own errors are awaited, so these are not the test's.
    for (const p of [pool, explainPool]) p.on('error', () => undefined);
  });
  after(async () => {
    await logged?.$disconnect();
    await pool?.end();
    await explainPool?.end();
    await scratch?.drop();
  });

  /** The queries `run` sent that read `table`. */
  async function queriesOn(table: string, run: (db: PrismaClient) => Promise<unknown>): Promise<Captured[]> {
    captured = [];
    await run(logged);
    const reads = captured.filter((q) => new RegExp(`FROM "public"\\."${table}"`).test(q.sql));
    assert.ok(reads.length > 0, `no query on ${table} captured among: ${captured.map((q) => q.sql).join('\n')}`);
    return reads;
  }

  async function explain(q: Captured, before: string[] = []): Promise<PlanNode> {
    const client = await explainPool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL enable_seqscan = off');
      await client.query('SET LOCAL enable_sort = off');
      for (const statement of before) await client.query(statement);
      const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) ${q.sql}`, q.params);
      return rows[0]!['QUERY PLAN'][0]!.Plan;
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  }

  const payments = (query: Record<string, unknown>) => (db: PrismaClient) =>
    listPayments({ prisma: db }, app, ZListPaymentsQuery.parse(query), anyCursor);

  const summary = (nodes: PlanNode[]) =>
    nodes.map((n) => `${n['Node Type']}${n['Index Name'] ? ` using ${n['Index Name']}` : ''}`).join(' > ');

  /** The index each read of `table` goes through (a bitmap heap scan's through its bitmap index scan). */
  const indexesRead = (plan: PlanNode, table: string) =>
    nodesOf(plan)
      .filter((n) => n['Relation Name'] === table)
      .map((n) =>
        n['Node Type'] === 'Bitmap Heap Scan'
          ? n.Plans?.[0]?.['Index Name']
          : /^Index (Only )?Scan$/.test(n['Node Type'])
            ? n['Index Name']
            : undefined,
      );

  /**
   * Every query `run` sends to `table` reads it through one of `indexes`; a list (`ordered`) with an
   * index scan and no sort, so the page comes out of the index in order; a next page (`after`) with
   * the cursor's created_at as a bound of that scan (an Index Cond, not a Filter): the scan starts at
   * the cursor instead of reading, and dropping, every newer row.
   */
  async function assertListIndexed(
    table: string,
    indexes: string[],
    run: (db: PrismaClient) => Promise<unknown>,
    opts: { ordered?: boolean; after?: boolean; without?: string[] } = {},
  ) {
    for (const q of await queriesOn(table, run)) {
      const plan = await explain(
        q,
        (opts.without ?? []).map((index) => `DROP INDEX ${index}`),
      ); // rolled back
      const nodes = nodesOf(plan);
      const used = indexesRead(plan, table);
      assert.ok(
        used.length > 0 && used.every((i) => i !== undefined && indexes.includes(i)),
        `${table} should be read through ${indexes.join(' or ')}: ${summary(nodes)}\n${q.sql}`,
      );
      if (opts.ordered !== false) {
        assert.ok(
          nodes.some((n) => /^Index (Only )?Scan$/.test(n['Node Type'])),
          `an ordered index scan: ${summary(nodes)}`,
        );
        assert.equal(nodes.filter((n) => /Sort/.test(n['Node Type'])).length, 0, `a sort on top of the index: ${summary(nodes)}\n${q.sql}`);
      }
      if (opts.after) {
        const scan = nodes.find((n) => n['Relation Name'] === table && /^Index (Only )?Scan$/.test(n['Node Type']));
        assert.match(
          scan?.['Index Cond'] ?? '',
          /created_at <=/,
          `the cursor bounds the index scan: ${JSON.stringify(scan?.['Index Cond'])}\n${q.sql}`,
        );
      }
    }
  }

  test('control: without its index, the Payments list sorts (so the checks above can fail)', async () => {
    const [q] = await queriesOn('payments', payments({}));
    const plan = await explain(q!, ['DROP INDEX payments_app_id_created_at_id_idx']); // rolled back
    const nodes = nodesOf(plan);
    assert.ok(
      nodes.some((n) => /Sort/.test(n['Node Type'])),
      `expected a sort: ${summary(nodes)}`,
    );
    assert.ok(!indexesRead(plan, 'payments').includes('payments_app_id_created_at_id_idx'));
    const [still] = await h().db.prisma.$queryRaw<
      Array<{ n: number }>
    >`SELECT count(*)::int AS n FROM pg_indexes WHERE indexname = 'payments_app_id_created_at_id_idx'`;
    assert.equal(still!.n, 1, 'the index is back after the rollback');
  });

  // Any string of a nextCursor's format: the codec above decodes every one to POSITION.
  for (const cursor of [undefined, `next.${'0'.repeat(32)}`]) {
    const page = cursor ? ' (a next page)' : '';
    const assertIndexed = (table: string, indexes: string[], run: (db: PrismaClient) => Promise<unknown>, without?: string[]) =>
      assertListIndexed(table, indexes, run, { after: !!cursor, without });
    test(`GET /v2/payments${page}: by app, by externalReference, by status, by creation range`, async () => {
      await assertIndexed('payments', ['payments_app_id_created_at_id_idx'], payments({ cursor }));
      // For an app with few Payments, its index plus a filter is as cheap as the externalReference or
      // status index, and the suite's data decides which the planner takes: without the app's index,
      // each filter's index must serve the filter and the order on its own (no sort).
      await assertIndexed(
        'payments',
        ['payments_app_id_external_reference_created_at_id_idx'],
        payments({ cursor, externalReference: 'order-7' }),
        ['payments_app_id_created_at_id_idx'],
      );
      await assertIndexed(
        'payments',
        ['payments_app_id_status_created_at_id_idx'],
        payments({ cursor, status: 'requires_payment_method' }),
        ['payments_app_id_created_at_id_idx'],
      );
      await assertIndexed(
        'payments',
        ['payments_app_id_created_at_id_idx'],
        payments({ cursor, createdFrom: '2026-01-01T00:00:00.000Z', createdTo: '2099-01-01T00:00:00.000Z' }),
      );
      await assertIndexed(
        'payments',
        ['payments_app_id_external_reference_created_at_id_idx', 'payments_app_id_status_created_at_id_idx'],
        payments({ cursor, externalReference: 'order-7', status: 'requires_payment_method', createdFrom: '2026-01-01T00:00:00.000Z' }),
        ['payments_app_id_created_at_id_idx'],
      );
    });

    test(`GET /v2/accounts/{id}/vault/audit-events${page}`, async () => {
      const list = (query: Record<string, unknown>) => (db: PrismaClient) =>
        listVaultAuditEvents(db, app, merchant.accountId, ZListVaultAuditEventsQuery.parse(query), anyCursor);
      await assertIndexed('vault_audit_events', ['vault_audit_events_vault_id_created_at_id_idx'], list({ cursor }));
    });

    test(`GET /v2/events${page}: by app, by resource, by name, by creation range`, async () => {
      const list = (query: Record<string, unknown>) => (db: PrismaClient) => listEvents(db, app, ZListEventsQuery.parse(query), anyCursor);
      await assertIndexed('events', ['events_app_id_created_at_id_idx'], list({ cursor }));
      await assertIndexed(
        'events',
        ['events_app_id_created_at_id_idx'],
        list({ cursor, createdFrom: '2026-01-01T00:00:00.000Z', createdTo: '2099-01-01T00:00:00.000Z' }),
      );
      // As for Payments: without the app's index, each filter's index serves the filter and the order.
      await assertIndexed('events', ['events_app_id_resource_id_created_at_id_idx'], list({ cursor, resourceId: merchant.accountId }), [
        'events_app_id_created_at_id_idx',
      ]);
      await assertIndexed('events', ['events_app_id_name_created_at_id_idx'], list({ cursor, name: 'account.created' }), [
        'events_app_id_created_at_id_idx',
      ]);
    });

    test(`GET /v2/accounts/{id}/deposits${page}: all, by status`, async () => {
      const list = (query: Record<string, unknown>) => (db: PrismaClient) =>
        listDeposits({ prisma: db }, app, merchant.accountId, ZListDepositsQuery.parse(query), anyCursor);
      await assertIndexed('deposits', ['deposits_account_id_created_at_id_idx'], list({ cursor }));
      await assertIndexed('deposits', ['deposits_account_id_status_created_at_id_idx'], list({ cursor, status: 'settled' }));
    });

    test(`GET /v2/accounts/{id}/bank-accounts${page}: all, by status (an account's few bank accounts, on the account index)`, async () => {
      const list = (query: Record<string, unknown>) => (db: PrismaClient) =>
        listBankAccounts(db, app, merchant.accountId, ZListBankAccountsQuery.parse(query), anyCursor);
      await assertIndexed('bank_accounts', ['bank_accounts_account_id_created_at_id_idx'], list({ cursor }));
      await assertIndexed('bank_accounts', ['bank_accounts_account_id_created_at_id_idx'], list({ cursor, status: 'verified' }));
    });

    test(`GET /v2/accounts/{id}/deposit-addresses${page}: all, by network, by asset, by both`, async () => {
      const list = (query: Record<string, unknown>) => (db: PrismaClient) =>
        listDepositAddresses(db, app, merchant.accountId, ZListDepositAddressesQuery.parse(query), anyCursor);
      await assertIndexed('deposit_addresses', ['deposit_addresses_account_id_created_at_id_idx'], list({ cursor }));
      await assertIndexed('deposit_addresses', ['deposit_addresses_account_id_created_at_id_idx'], list({ cursor, chainId: '31337' }));
      await assertIndexed('deposit_addresses', ['deposit_addresses_account_id_created_at_id_idx'], list({ cursor, assetSymbol: 'USDC' }));
      await assertIndexed(
        'deposit_addresses',
        ['deposit_addresses_account_chain_asset_created_at_id_idx'],
        list({ cursor, chainId: '31337', assetSymbol: 'USDC' }),
      );
    });

    test(`GET /v2/accounts/{id}/transactions${page}: all, by paymentId, by status`, async () => {
      const list = (query: Record<string, unknown>) => (db: PrismaClient) =>
        listAccountTransactions(db, anyCursor, app.id, merchant.accountId, ZListTransactionsQuery.parse(query));
      await assertIndexed('ledger_transactions', ['ledger_transactions_account_id_created_at_id_idx'], list({ cursor }));
      await assertIndexed(
        'ledger_transactions',
        ['ledger_transactions_account_id_payment_id_created_at_id_idx'],
        list({ cursor, paymentId: 'payment_x1' }),
      );
      await assertIndexed(
        'ledger_transactions',
        ['ledger_transactions_account_id_status_created_at_id_idx'],
        list({ cursor, status: 'posted' }),
      );
      await assertIndexed(
        'ledger_transactions',
        ['ledger_transactions_account_id_payment_id_created_at_id_idx', 'ledger_transactions_account_id_status_created_at_id_idx'],
        list({ cursor, paymentId: 'payment_x1', status: 'posted' }),
      );
    });

    test(`webhook deliveries of an app${page}: all, by endpoint, by status`, async () => {
      const list = (query: Record<string, unknown>) => (db: PrismaClient) => listWebhookDeliveries(db, anyCursor, app.id, query);
      await assertIndexed('webhook_deliveries', ['webhook_deliveries_app_id_created_at_id_idx'], list({ cursor }));
      await assertIndexed(
        'webhook_deliveries',
        ['webhook_deliveries_endpoint_id_created_at_id_idx'],
        list({ cursor, endpointId: 'whe_x1' }),
      );
      await assertIndexed(
        'webhook_deliveries',
        ['webhook_deliveries_app_id_status_created_at_id_idx'],
        list({ cursor, status: 'abandoned' }),
      );
    });
  }

  test('webhook endpoints of an app (one list, no pages)', async () => {
    await assertListIndexed('webhook_endpoints', ['webhook_endpoints_app_id_created_at_id_idx'], (db) => listWebhookEndpoints(db, app.id));
  });

  test("a Payment's incidents are read by payment id", async () => {
    await assertListIndexed('payment_incidents', ['payment_incidents_payment_id_idx'], payments({}), { ordered: false });
  });
});

/**
 * Prisma can declare plain indexes (@@index), not partial or expression ones: every @@index of
 * prisma/schema exists in the database built from the migrations, on the same columns, and every
 * plain non-unique index of the database is declared.
 */
test('the @@index declarations of prisma/schema and the indexes the migrations create agree', async () => {
  const h = await getHarness();
  const dir = path.resolve(__dirname, '../../prisma/schema');
  const source = readdirSync(dir)
    .filter((f) => f.endsWith('.prisma'))
    .map((f) => readFileSync(path.join(dir, f), 'utf8'))
    .join('\n');
  const declared = new Map<string, string>();
  for (const m of source.matchAll(/^model\s+(\w+)\s*\{([\s\S]*?)^\}/gm)) {
    const body = m[2]!;
    const table = /@@map\("([^"]+)"\)/.exec(body)?.[1] ?? m[1]!;
    const columnOf = new Map<string, string>();
    for (const line of body.split('\n')) {
      const f = /^\s*(\w+)\s+\w+/.exec(line);
      if (f && !line.trim().startsWith('@@')) columnOf.set(f[1]!, /@map\("([^"]+)"\)/.exec(line)?.[1] ?? f[1]!);
    }
    for (const idx of body.matchAll(/@@index\(\[([^\]]+)\](?:,\s*map:\s*"([^"]+)")?\)/g)) {
      const columns = idx[1]!.split(',').map((c) => columnOf.get(c.trim()) ?? c.trim());
      declared.set(idx[2] ?? `${table}_${columns.join('_')}_idx`, `${table}(${columns.join(', ')})`);
    }
  }
  const rows = await h.db.prisma.$queryRaw<Array<{ indexname: string; indexdef: string }>>`
    SELECT indexname, indexdef FROM pg_indexes
    WHERE schemaname = 'public' AND indexdef NOT LIKE 'CREATE UNIQUE%' AND indexdef NOT LIKE '% WHERE %'`;
  const actual = new Map(
    rows.map((r) => {
      const [, table, columns] = /ON public\.(\w+) USING btree \((.*)\)$/.exec(r.indexdef) ?? [];
      return [r.indexname, `${table}(${(columns ?? r.indexdef).replace(/"/g, '')})`];
    }),
  );
  assert.deepEqual(new Map([...actual].sort()), new Map([...declared].sort()));
});
