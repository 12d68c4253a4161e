import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newId } from '../../src/domain/values/ids';
import {
  bookFor,
  LedgerError,
  LedgerValidationError,
  postToLedger,
  preparePosting,
  updateTransactionStatus,
  type PostingInput,
} from '../../src/domain/ledger/ledger';
import { getHarness } from '../support/harness';
import { appWithAccount, post, receivePayment, usdc } from './fixtures';
import { newAccount } from '../support/fixtures';

async function collectionInput(appId: string, accountId: string, amount: bigint, paymentId = newId('payment')): Promise<PostingInput> {
  const asset = await usdc();
  return {
    appId,
    sourceType: 'payment',
    sourceId: paymentId,
    leg: 'collection',
    asset,
    description: 'Collection into escrow',
    entries: [
      { book: bookFor('escrow', paymentId), amountAtomic: amount, accountId },
      { book: bookFor('external', asset.chainId), amountAtomic: -amount },
    ],
    transactions: [
      {
        accountId,
        direction: 'received',
        senderAccountId: null,
        receiverAccountId: accountId,
        amountAtomic: amount,
        status: 'pending',
        financialLegKind: 'collection',
        paymentId,
      },
    ],
  };
}

async function rowsOf(sourceId: string) {
  const { db } = await getHarness();
  const postings = await db.prisma.ledgerPosting.findMany({ where: { sourceId } });
  const ids = postings.map((p) => p.id);
  const entries = await db.prisma.ledgerEntry.findMany({
    where: { postingId: { in: ids } },
    orderBy: [{ postingId: 'asc' }, { line: 'asc' }],
  });
  const transactions = await db.prisma.ledgerTransaction.findMany({ where: { postingId: { in: ids } } });
  return { postings, entries, transactions };
}

describe('Ledger postings', () => {
  test('posting balanced entries creates one posting with its entries and the Transactions it carries', async () => {
    const { cred, accountId } = await appWithAccount();
    const input = await collectionInput(cred.appId, accountId, 25_000_000n);
    const result = await post(input);
    assert.equal(result.created, true);
    assert.match(result.postingId, /^posting_[A-Za-z0-9]{22}$/);

    const { postings, entries, transactions } = await rowsOf(input.sourceId);
    assert.equal(postings.length, 1);
    assert.deepEqual(
      {
        id: postings[0]!.id,
        appId: postings[0]!.appId,
        sourceType: postings[0]!.sourceType,
        leg: postings[0]!.leg,
        description: postings[0]!.description,
      },
      { id: result.postingId, appId: cred.appId, sourceType: 'payment', leg: 'collection', description: 'Collection into escrow' },
    );
    assert.deepEqual(
      entries.map((e) => [e.line, e.book, e.accountId, e.chainId, e.tokenAddress, e.assetSymbol, e.decimals, e.amountAtomic.toFixed(0)]),
      [
        [1, `escrow:${input.sourceId}`, accountId, 31337, '0xf1108D9fDF3d265B59Bf6Ce7Bf240f99c071ffF5', 'USDC', 6, '25000000'],
        [2, 'external:31337', null, 31337, '0xf1108D9fDF3d265B59Bf6Ce7Bf240f99c071ffF5', 'USDC', 6, '-25000000'],
      ],
    );
    assert.ok(entries.every((e) => /^entry_[A-Za-z0-9]{22}$/.test(e.id)));
    assert.equal(transactions.length, 1);
    const t = transactions[0]!;
    assert.match(t.id, /^txn_[A-Za-z0-9]{22}$/);
    assert.deepEqual(
      [
        t.postingId,
        t.accountId,
        t.direction,
        t.senderAccountId,
        t.receiverAccountId,
        t.amountAtomic.toFixed(0),
        t.status,
        t.financialLegKind,
        t.paymentId,
        t.description,
      ],
      [
        result.postingId,
        accountId,
        'received',
        null,
        accountId,
        '25000000',
        'pending',
        'collection',
        input.sourceId,
        'Collection into escrow',
      ],
    );
  });

  test('an unbalanced posting is refused before anything is written, and the caller transaction stays usable', async () => {
    const { cred, accountId } = await appWithAccount();
    const h = await getHarness();
    const input = await collectionInput(cred.appId, accountId, 10n);
    const unbalanced = { ...input, entries: [input.entries[0]!, { ...input.entries[1]!, amountAtomic: -9n }] };
    const balancedLeg = { ...input, leg: 'collection_retry' };
    const outcome = await h.db.prisma.$transaction(async (tx) => {
      const refusal = await postToLedger(tx, unbalanced).catch((err: unknown) => err);
      // The refusal came before any statement, so the same transaction can still write.
      const after = await postToLedger(tx, balancedLeg);
      return { refusal, after };
    });
    assert.ok(outcome.refusal instanceof LedgerValidationError);
    assert.equal(outcome.refusal.type, 'LedgerValidationError');
    assert.deepEqual(outcome.refusal.issues, [
      'entries for asset 31337:0xf1108d9fdf3d265b59bf6ce7bf240f99c071fff5 sum to 1, not 0 (unbalanced)',
    ]);
    const { postings } = await rowsOf(input.sourceId);
    assert.deepEqual(
      postings.map((p) => p.leg),
      ['collection_retry'],
    );
    assert.equal(outcome.after.created, true);
  });

  test('refuses fewer than two entries, zero amounts, a upa book attributed to someone else, and another app’s account', async () => {
    const { cred, accountId } = await appWithAccount();
    const other = await appWithAccount();
    const input = await collectionInput(cred.appId, accountId, 10n);
    await assert.rejects(post({ ...input, entries: [] }), (err: LedgerValidationError) => {
      assert.deepEqual(err.issues, ['a posting needs at least 2 entries, got 0']);
      return true;
    });
    await assert.rejects(
      post({
        ...input,
        entries: [
          { book: 'fees:platform', amountAtomic: 0n },
          { book: 'network_fees', amountAtomic: 0n },
        ],
      }),
      (err: LedgerValidationError) => {
        assert.deepEqual(err.issues, ['entries[0]: amountAtomic must not be zero', 'entries[1]: amountAtomic must not be zero']);
        return true;
      },
    );
    await assert.rejects(
      post({
        ...input,
        entries: [
          { book: bookFor('upa_settled', accountId), amountAtomic: 10n, accountId: other.accountId },
          { book: 'external:31337', amountAtomic: -10n },
        ],
      }),
      (err: LedgerValidationError) => {
        assert.deepEqual(err.issues, [`entries[0]: book upa:${accountId}:settled belongs to ${accountId}, not ${other.accountId}`]);
        return true;
      },
    );
    await assert.rejects(post({ ...input, appId: other.cred.appId }), (err: LedgerValidationError) => {
      assert.deepEqual(err.issues, [`account ${accountId} does not exist in app ${other.cred.appId}`]);
      return true;
    });
    const { postings } = await rowsOf(input.sourceId);
    assert.deepEqual(postings, []);
  });

  test('posting the same (source, leg) twice posts once and answers the first postingId', async () => {
    const { cred, accountId } = await appWithAccount();
    const input = await collectionInput(cred.appId, accountId, 7_000_000n);
    const first = await post(input);
    const second = await post({ ...input, description: 'a retry may word it differently' });
    assert.deepEqual(second, { postingId: first.postingId, created: false });
    const { postings, entries, transactions } = await rowsOf(input.sourceId);
    assert.equal(postings.length, 1);
    assert.equal(entries.length, 2);
    assert.equal(transactions.length, 1);
  });

  test('20 concurrent posts of the same (source, leg) post exactly once', async () => {
    const { cred, accountId } = await appWithAccount();
    const h = await getHarness();
    const input = await collectionInput(cred.appId, accountId, 3_000_000n);
    const results = await Promise.all(
      Array.from({ length: 20 }, () => h.db.prisma.$transaction((tx) => postToLedger(tx, input), { maxWait: 30_000, timeout: 30_000 })),
    );
    assert.equal(results.filter((r) => r.created).length, 1);
    assert.equal(new Set(results.map((r) => r.postingId)).size, 1);
    const { postings, entries, transactions } = await rowsOf(input.sourceId);
    assert.deepEqual(
      postings.map((p) => p.id),
      [results[0]!.postingId],
    );
    assert.equal(entries.length, 2);
    assert.equal(transactions.length, 1);
  });

  test('a replay of the same (source, leg) with different amounts is refused as a conflict', async () => {
    const { cred, accountId } = await appWithAccount();
    const input = await collectionInput(cred.appId, accountId, 5n);
    const first = await post(input);
    const changed = await collectionInput(cred.appId, accountId, 6n, input.sourceId);
    await assert.rejects(post(changed), (err: LedgerError) => {
      assert.equal(err.type, 'LedgerPostingConflict');
      assert.equal(err.details.postingId, first.postingId);
      return true;
    });
    const { entries } = await rowsOf(input.sourceId);
    assert.deepEqual(
      entries.map((e) => e.amountAtomic.toFixed(0)),
      ['5', '-5'],
    );
  });

  test('the database refuses, at commit, an unbalanced posting written around postToLedger', async () => {
    const { cred, accountId } = await appWithAccount();
    const h = await getHarness();
    const postingId = newId('ledgerPosting');
    const sourceId = newId('payment');
    await assert.rejects(
      h.db.prisma.$transaction(async (tx) => {
        await tx.$executeRaw`INSERT INTO ledger_postings (id, app_id, source_type, source_id, leg, description, fingerprint)
          VALUES (${postingId}, ${cred.appId}, 'payment', ${sourceId}, 'collection', 'raw', 'raw')`;
        await tx.$executeRaw`INSERT INTO ledger_entries (id, posting_id, line, book, account_id, chain_id, token_address, asset_symbol, decimals, amount_atomic)
          VALUES (${newId('ledgerEntry')}, ${postingId}, 1, ${`escrow:${sourceId}`}, ${accountId}, 31337, '0xf1108D9fDF3d265B59Bf6Ce7Bf240f99c071ffF5', 'USDC', 6, 100),
                 (${newId('ledgerEntry')}, ${postingId}, 2, 'external:31337', NULL, 31337, '0xf1108D9fDF3d265B59Bf6Ce7Bf240f99c071ffF5', 'USDC', 6, -99)`;
      }),
      new RegExp(
        `ledger posting ${postingId} is unbalanced: its entries for asset 31337:0xf1108d9fdf3d265b59bf6ce7bf240f99c071fff5 sum to 1, not 0`,
      ),
    );
    await assert.rejects(
      h.db.prisma.$transaction(async (tx) => {
        await tx.$executeRaw`INSERT INTO ledger_postings (id, app_id, source_type, source_id, leg, description, fingerprint)
          VALUES (${postingId}, ${cred.appId}, 'payment', ${sourceId}, 'collection', 'raw', 'raw')`;
      }),
      new RegExp(`ledger posting ${postingId} has 0 entries; a posting needs at least two`),
    );
    const { postings, entries } = await rowsOf(sourceId);
    assert.deepEqual([postings, entries], [[], []]);
  });

  test('the journal is append-only: updating or deleting an entry is refused', async () => {
    const { cred, accountId } = await appWithAccount();
    const h = await getHarness();
    const input = await collectionInput(cred.appId, accountId, 11n);
    const { postingId } = await post(input);
    await assert.rejects(
      h.db.prisma.$executeRaw`UPDATE ledger_entries SET amount_atomic = 12 WHERE posting_id = ${postingId} AND line = 1`,
      /ledger_entries is append-only: UPDATE refused/,
    );
    await assert.rejects(
      h.db.prisma.$executeRaw`DELETE FROM ledger_entries WHERE posting_id = ${postingId}`,
      /ledger_entries is append-only: DELETE refused/,
    );
    await assert.rejects(
      h.db.prisma.$executeRaw`DELETE FROM ledger_postings WHERE id = ${postingId}`,
      /ledger_postings is append-only: DELETE refused/,
    );
    const { entries } = await rowsOf(input.sourceId);
    assert.deepEqual(
      entries.map((e) => e.amountAtomic.toFixed(0)),
      ['11', '-11'],
    );
  });

  test('updateTransactionStatus moves pending to posted, repeats as a no-op, and refuses to leave reversed', async () => {
    const { cred, accountId } = await appWithAccount();
    const h = await getHarness();
    const { paymentId } = await receivePayment({ appId: cred.appId, accountId, amount: 1_000n });
    const key = { sourceType: 'payment' as const, sourceId: paymentId, leg: 'collection' };
    const statusOf = async () => (await h.db.prisma.ledgerTransaction.findMany({ where: { paymentId } })).map((t) => t.status);
    await h.db.prisma.$transaction((tx) => updateTransactionStatus(tx, { ...key, status: 'posted' }));
    assert.deepEqual(await statusOf(), ['posted']);
    await h.db.prisma.$transaction((tx) => updateTransactionStatus(tx, { ...key, status: 'posted' }));
    assert.deepEqual(await statusOf(), ['posted']);
    await assert.rejects(
      h.db.prisma.$transaction((tx) => updateTransactionStatus(tx, { ...key, status: 'pending' })),
      (err: LedgerError) => err.type === 'LedgerStatusTransitionRefused' && /cannot move from posted to pending/.test(err.message),
    );
    await h.db.prisma.$transaction((tx) => updateTransactionStatus(tx, { ...key, status: 'reversed' }));
    assert.deepEqual(await statusOf(), ['reversed']);
    await assert.rejects(
      h.db.prisma.$transaction((tx) => updateTransactionStatus(tx, { ...key, status: 'posted' })),
      (err: LedgerError) => err.type === 'LedgerStatusTransitionRefused',
    );
    await assert.rejects(
      h.db.prisma.$transaction((tx) => updateTransactionStatus(tx, { ...key, leg: 'settlement', status: 'posted' })),
      (err: LedgerError) => err.type === 'LedgerNotFound',
    );
    assert.deepEqual(await statusOf(), ['reversed']);
  });

  test('a posting between two accounts of the app carries one Transaction per side', async () => {
    const { cred, accountId: sender } = await appWithAccount();
    const receiver = await newAccount(cred);
    const asset = await usdc();
    const paymentId = newId('payment');
    const { postingId } = await post({
      appId: cred.appId,
      sourceType: 'payment',
      sourceId: paymentId,
      leg: 'settlement',
      asset,
      description: 'UPA to UPA',
      entries: [
        { book: bookFor('external', asset.chainId), amountAtomic: -40n },
        { book: bookFor('upa_settled', receiver), amountAtomic: 40n },
      ],
      transactions: [
        {
          accountId: sender,
          direction: 'sent',
          senderAccountId: sender,
          receiverAccountId: receiver,
          amountAtomic: 40n,
          status: 'posted',
          financialLegKind: 'settlement',
          paymentId,
        },
        {
          accountId: receiver,
          direction: 'received',
          senderAccountId: sender,
          receiverAccountId: receiver,
          amountAtomic: 40n,
          status: 'posted',
          financialLegKind: 'settlement',
          paymentId,
        },
      ],
    });
    const h = await getHarness();
    const rows = await h.db.prisma.ledgerTransaction.findMany({ where: { postingId }, orderBy: { direction: 'asc' } });
    assert.deepEqual(
      rows.map((r) => [r.accountId, r.direction]),
      [
        [receiver, 'received'],
        [sender, 'sent'],
      ],
    );
    const entries = await h.db.prisma.ledgerEntry.findMany({ where: { postingId }, orderBy: { line: 'asc' } });
    assert.deepEqual(
      entries.map((e) => e.accountId),
      [null, receiver],
    );
  });
});

describe('Ledger rules (pure)', () => {
  const asset = { chainId: 31337, tokenAddress: '0xf1108d9fdf3d265b59bf6ce7bf240f99c071fff5', symbol: 'USDC', decimals: 6 };
  const base = { appId: 'app_x', sourceType: 'deposit' as const, sourceId: 'deposit_1', leg: 'detected', asset, description: 'd' };

  test('bookFor names every book of the chart', () => {
    assert.deepEqual(
      [
        bookFor('external', 31337),
        bookFor('escrow', 'payment_a'),
        bookFor('deposit_custody', 'deposit_addr_b'),
        bookFor('upa_settled', 'acct_c'),
        bookFor('platform_fees'),
        bookFor('partner_fees', 'app_d'),
        bookFor('network_fees'),
      ],
      [
        'external:31337',
        'escrow:payment_a',
        'custody:deposit:deposit_addr_b',
        'upa:acct_c:settled',
        'fees:platform',
        'fees:partner:app_d',
        'network_fees',
      ],
    );
    assert.throws(() => bookFor('escrow', 'bad:id'), LedgerValidationError);
  });

  test('balances per asset: a two-asset posting balances only when each asset sums to zero', () => {
    const other = { chainId: 1, tokenAddress: '0x0000000000000000000000000000000000000001', symbol: 'DAI', decimals: 18 };
    const entries = [
      { book: 'custody:deposit:deposit_addr_1', amountAtomic: 5n },
      { book: 'external:31337', amountAtomic: -5n },
      { book: 'custody:deposit:deposit_addr_1', amountAtomic: 9n, asset: other },
      { book: 'external:1', amountAtomic: -9n, asset: other },
    ];
    const prepared = preparePosting({ ...base, entries });
    assert.equal(prepared.entries[0]!.asset.tokenAddress, '0xf1108D9fDF3d265B59Bf6Ce7Bf240f99c071ffF5');
    assert.throws(
      () => preparePosting({ ...base, entries: [entries[0]!, { ...entries[1]!, asset: other }, entries[2]!, { ...entries[3]!, asset }] }),
      (err: LedgerValidationError) => {
        assert.deepEqual(err.issues, [
          'entries for asset 31337:0xf1108d9fdf3d265b59bf6ce7bf240f99c071fff5 sum to -4, not 0 (unbalanced)',
          'entries for asset 1:0x0000000000000000000000000000000000000001 sum to 4, not 0 (unbalanced)',
        ]);
        return true;
      },
    );
  });

  test('derives the account of upa books and checks Transaction sides', () => {
    const prepared = preparePosting({
      ...base,
      entries: [
        { book: 'upa:acct_r:settled', amountAtomic: 3n },
        { book: 'external:31337', amountAtomic: -3n },
      ],
    });
    assert.deepEqual(
      prepared.entries.map((e) => e.accountId),
      ['acct_r', null],
    );
    assert.throws(
      () =>
        preparePosting({
          ...base,
          entries: prepared.entries.map((e) => ({ book: e.book, amountAtomic: e.amountAtomic })),
          transactions: [
            {
              accountId: 'acct_r',
              direction: 'sent',
              senderAccountId: 'acct_s',
              receiverAccountId: 'acct_r',
              amountAtomic: 3n,
              status: 'posted',
              financialLegKind: 'deposit',
            },
          ],
        }),
      (err: LedgerValidationError) => {
        assert.deepEqual(err.issues, ["transactions[0]: a sent transaction's senderAccountId is its accountId"]);
        return true;
      },
    );
  });
});
