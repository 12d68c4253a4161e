import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newId } from '../../src/domain/values/ids';
import { ZBalances } from '../../src/domain/ledger/balances.schemas';
import { bookFor } from '../../src/domain/ledger/ledger';
import { ZTransactionDetail, ZTransactionList } from '../../src/domain/ledger/transactions.schemas';
import { call, newApp } from '../support/api-client';
import { getHarness } from '../support/harness';
import { appWithAccount, post, receivePayment, usdc } from './fixtures';
import { newAccount } from '../support/fixtures';

const TOKEN = '0xf1108D9fDF3d265B59Bf6Ce7Bf240f99c071ffF5';
const USDC_VIEW = { chainId: 31337, tokenAddress: TOKEN, symbol: 'USDC', decimals: 6, kind: 'token' };
const amount = (atomic: string) => ({ asset: USDC_VIEW, amount: atomic });

async function entriesOf(postingId: string) {
  const h = await getHarness();
  return h.db.prisma.ledgerEntry.findMany({ where: { postingId }, orderBy: { line: 'asc' } });
}

async function transactionOf(postingId: string) {
  const h = await getHarness();
  return h.db.prisma.ledgerTransaction.findFirstOrThrow({ where: { postingId } });
}

describe('Get transaction', () => {
  test('answers the spec shape with the entries of the posting on the account’s books, exact amounts', async () => {
    const { cred, accountId } = await appWithAccount();
    const { paymentId, settlement } = await receivePayment({ appId: cred.appId, accountId, amount: 100_000_000n, settle: true });
    const txn = await transactionOf(settlement!);
    const entries = await entriesOf(settlement!);

    const res = await call(`/v2/accounts/${accountId}/transactions/${txn.id}`, { credential: cred });
    assert.equal(res.status, 200, res.text);
    ZTransactionDetail.parse(res.body);
    // Lines 1 (escrow, attributed to the recipient) and 2 (its settled book); the fee lines are not its books.
    assert.deepEqual(res.body, {
      accountId,
      transaction: {
        id: txn.id,
        accountId,
        senderAccountId: null,
        receiverAccountId: accountId,
        direction: 'received',
        status: 'posted',
        amount: amount('98500000'),
        description: `Settlement for ${paymentId}`,
        sourceType: 'payment',
        sourceId: paymentId,
        paymentId,
        financialLegKind: 'settlement',
      },
      ledgerEntries: [
        { id: entries[0]!.id, direction: 'credit', amount: amount('100000000'), createdAt: entries[0]!.createdAt.toISOString() },
        { id: entries[1]!.id, direction: 'debit', amount: amount('98500000'), createdAt: entries[1]!.createdAt.toISOString() },
      ],
    });
  });

  test('shows every entry of the posting when none of them is on the account’s books', async () => {
    const { cred, accountId: sender } = await appWithAccount();
    const receiver = await newAccount(cred);
    const asset = await usdc();
    const paymentId = newId('payment');
    const { postingId } = await post({
      appId: cred.appId,
      sourceType: 'payment',
      sourceId: paymentId,
      leg: 'collection',
      asset,
      description: 'Sender pays into escrow',
      entries: [
        { book: bookFor('escrow', paymentId), amountAtomic: 1_500_000n },
        { book: bookFor('external', asset.chainId), amountAtomic: -1_500_000n },
      ],
      transactions: [
        {
          accountId: sender,
          direction: 'sent',
          senderAccountId: sender,
          receiverAccountId: receiver,
          amountAtomic: 1_500_000n,
          status: 'pending',
          financialLegKind: 'collection',
          paymentId,
        },
      ],
    });
    const txn = await transactionOf(postingId);
    const entries = await entriesOf(postingId);
    const res = await call(`/v2/accounts/${sender}/transactions/${txn.id}`, { credential: cred });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.transaction.direction, 'sent');
    assert.equal(res.body.transaction.receiverAccountId, receiver);
    assert.deepEqual(res.body.ledgerEntries, [
      { id: entries[0]!.id, direction: 'debit', amount: amount('1500000'), createdAt: entries[0]!.createdAt.toISOString() },
      { id: entries[1]!.id, direction: 'credit', amount: amount('1500000'), createdAt: entries[1]!.createdAt.toISOString() },
    ]);
  });

  test('is 404 for another app’s account, another account’s transaction and an unknown id; 400 for a malformed id', async () => {
    const { cred, accountId } = await appWithAccount();
    const other = await appWithAccount();
    const { collection } = await receivePayment({ appId: cred.appId, accountId, amount: 1n });
    const txn = await transactionOf(collection);
    const sibling = await newAccount(cred);

    const foreign = await call(`/v2/accounts/${accountId}/transactions/${txn.id}`, { credential: other.cred });
    assert.equal(foreign.status, 404);
    assert.deepEqual(foreign.body, { error: { code: 'not_found', message: 'Account not found' } });
    const wrongAccount = await call(`/v2/accounts/${sibling}/transactions/${txn.id}`, { credential: cred });
    assert.equal(wrongAccount.status, 404);
    assert.deepEqual(wrongAccount.body, { error: { code: 'not_found', message: 'Transaction not found' } });
    const unknown = await call(`/v2/accounts/${accountId}/transactions/txn_doesnotexist`, { credential: cred });
    assert.equal(unknown.status, 404);
    const malformed = await call(`/v2/accounts/${accountId}/transactions/payment_x`, { credential: cred });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.error.details.fields[0].field, 'path.transactionId');
  });

  test('needs the v2:accounts scope', async () => {
    const { accountId } = await appWithAccount();
    const limited = await newApp({ scopes: ['v2:payments'] });
    const res = await call(`/v2/accounts/${accountId}/transactions`, { credential: limited });
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'forbidden');
  });
});

describe('List transactions', () => {
  test('pages newest first with a cursor to the end, and filters by paymentId and status', async () => {
    const { cred, accountId } = await appWithAccount();
    const payments = [];
    for (const n of [1n, 2n, 3n])
      payments.push(await receivePayment({ appId: cred.appId, accountId, amount: n * 1_000_000n, settle: n !== 2n }));
    // Postings: 1 collection + settlement, 2 collection, 3 collection + settlement = 5 Transactions.
    const h = await getHarness();
    const all = await h.db.prisma.ledgerTransaction.findMany({ where: { accountId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
    assert.equal(all.length, 5);

    const seen: string[] = [];
    let cursor: string | null = null;
    const pageSizes: number[] = [];
    do {
      const res: { status: number; body: any; text: string } = await call(
        `/v2/accounts/${accountId}/transactions?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { credential: cred },
      );
      assert.equal(res.status, 200, res.text);
      ZTransactionList.parse(res.body);
      assert.equal(res.body.accountId, accountId);
      pageSizes.push(res.body.transactions.length);
      seen.push(...res.body.transactions.map((t: { id: string }) => t.id));
      cursor = res.body.nextCursor;
    } while (cursor);
    assert.deepEqual(pageSizes, [2, 2, 1]);
    assert.deepEqual(
      seen,
      all.map((t) => t.id),
    );

    const byPayment = await call(`/v2/accounts/${accountId}/transactions?paymentId=${payments[0]!.paymentId}`, { credential: cred });
    assert.equal(byPayment.status, 200);
    const p0 = payments[0]!.paymentId;
    assert.deepEqual(
      byPayment.body.transactions.map((t: { id: string; financialLegKind: string; amount: unknown; status: string }) => [
        t.id,
        t.financialLegKind,
        t.status,
        t.amount,
      ]),
      all
        .filter((t) => t.paymentId === p0)
        .map((t) => [t.id, t.financialLegKind, t.status, amount(t.financialLegKind === 'settlement' ? '985000' : '1000000')]),
    );
    assert.deepEqual(byPayment.body.transactions.map((t: { financialLegKind: string }) => t.financialLegKind).sort(), [
      'collection',
      'settlement',
    ]);
    assert.equal(byPayment.body.nextCursor, null);

    const pending = await call(`/v2/accounts/${accountId}/transactions?status=pending`, { credential: cred });
    assert.deepEqual(
      pending.body.transactions.map((t: { id: string }) => t.id),
      all.filter((t) => t.status === 'pending').map((t) => t.id),
    );
    assert.equal(pending.body.transactions.length, 3);
  });

  test('refuses a tampered cursor, a cursor from another filter, and a limit outside 1-100 with 400', async () => {
    const { cred, accountId } = await appWithAccount();
    await receivePayment({ appId: cred.appId, accountId, amount: 5n, settle: true });
    const first = await call(`/v2/accounts/${accountId}/transactions?limit=1`, { credential: cred });
    assert.equal(first.status, 200);
    const cursor: string = first.body.nextCursor;
    assert.ok(cursor);
    const [payload, mac] = cursor.split('.');
    const forged = Buffer.from(
      JSON.stringify({ s: `transactions:${accountId}::`, p: { t: '2999-01-01T00:00:00.000Z', id: 'txn_z' } }),
    ).toString('base64url');
    // A cursor of the documented format whose signature fails, and one not of that format.
    const refusals: Array<[string, string]> = [
      [`${payload}x.${mac}`, 'Invalid cursor'],
      [`${forged}.${mac}`, 'Invalid cursor'],
      ['garbage', 'a nextCursor exactly as returned'],
    ];
    for (const [bad, message] of refusals) {
      const res = await call(`/v2/accounts/${accountId}/transactions?cursor=${encodeURIComponent(bad)}`, { credential: cred });
      assert.equal(res.status, 400, bad);
      assert.equal(res.body.error.code, 'bad_request');
      assert.deepEqual(res.body.error.details, { fields: [{ field: 'query.cursor', message }] });
    }
    const otherFilter = await call(`/v2/accounts/${accountId}/transactions?status=posted&cursor=${encodeURIComponent(cursor)}`, {
      credential: cred,
    });
    assert.equal(otherFilter.status, 400);
    for (const limit of ['0', '101', 'x']) {
      const res = await call(`/v2/accounts/${accountId}/transactions?limit=${limit}`, { credential: cred });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.details.fields[0].field, 'query.limit');
    }
    const defaults = await call(`/v2/accounts/${accountId}/transactions`, { credential: cred });
    assert.equal(defaults.body.transactions.length, 2);
    assert.equal(defaults.body.nextCursor, null);
  });

  test('is 404 for another app’s account and empty for an account without activity', async () => {
    const { cred, accountId } = await appWithAccount();
    const other = await appWithAccount();
    await receivePayment({ appId: cred.appId, accountId, amount: 5n });
    const foreign = await call(`/v2/accounts/${accountId}/transactions`, { credential: other.cred });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.error.code, 'not_found');
    const empty = await call(`/v2/accounts/${other.accountId}/transactions`, { credential: other.cred });
    assert.deepEqual(empty.body, { accountId: other.accountId, transactions: [], nextCursor: null });
  });
});

describe('Balances', () => {
  test('projects pending while escrow holds the funds and settled once paid out, per asset, exactly', async () => {
    const { cred, accountId } = await appWithAccount();
    const path = `/v2/accounts/${accountId}/balances`;
    const none = await call(path, { credential: cred });
    assert.equal(none.status, 200);
    assert.deepEqual(none.body, { accountId, balances: [] });

    await receivePayment({ appId: cred.appId, accountId, amount: 123_456_789n, settle: true });
    await receivePayment({ appId: cred.appId, accountId, amount: 1_000_000_000_000_000_000_000_000n });
    const res = await call(path, { credential: cred });
    assert.equal(res.status, 200, res.text);
    ZBalances.parse(res.body);
    // Settled: 123456789 - 1% (1234567) - 0.5% (617283) = 121604939. Pending: the unsettled 10^24 collection.
    assert.deepEqual(res.body, {
      accountId,
      balances: [
        {
          asset: USDC_VIEW,
          settledAtomic: '121604939',
          pendingAtomic: '1000000000000000000000000',
          totalAtomic: '1000000000000000121604939',
        },
      ],
    });
  });

  test('is 404 for another app’s account', async () => {
    const { accountId } = await appWithAccount();
    const other = await appWithAccount();
    const res = await call(`/v2/accounts/${accountId}/balances`, { credential: other.cred });
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { error: { code: 'not_found', message: 'Account not found' } });
  });
});
