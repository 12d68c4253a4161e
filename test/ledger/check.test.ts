import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkLedger } from '../../src/cli/ledger';
import type { Prisma } from '../../src/db/client';
import { newId } from '../../src/domain/values/ids';
import { getHarness } from '../support/harness';
import { runCli } from '../support/cli';
import { appWithAccount, receivePayment } from './fixtures';

const TOKEN = '0xf1108D9fDF3d265B59Bf6Ce7Bf240f99c071ffF5';

const cli = (args: string[]) => runCli(args);

/** Runs `corrupt` and `inspect` in one transaction, then rolls it back so the shared ledger is untouched. */
async function inRolledBackTransaction<T>(work: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  const h = await getHarness();
  const rollback = new Error('rollback');
  let result: T | undefined;
  await assert.rejects(
    h.db.prisma.$transaction(async (tx) => {
      result = await work(tx);
      throw rollback;
    }),
    (err) => err === rollback,
  );
  return result as T;
}

describe('Ledger check', () => {
  test('reports ok with the counts after a payment’s collection and settlement', async () => {
    const { cred, accountId } = await appWithAccount();
    await receivePayment({ appId: cred.appId, accountId, amount: 2_000_000n, settle: true });
    const h = await getHarness();
    const result = await checkLedger(h.db.prisma);
    assert.deepEqual(result.problems, []);
    assert.equal(result.ok, true);
    assert.equal(result.postings, await h.db.prisma.ledgerPosting.count());
    assert.equal(result.entries, await h.db.prisma.ledgerEntry.count());
    assert.equal(result.transactions, await h.db.prisma.ledgerTransaction.count());
    assert.ok(result.postings >= 2 && result.entries >= 6);
  });

  test('reports an unbalanced posting after an entry is corrupted with raw SQL (rolled back)', async () => {
    const { cred, accountId } = await appWithAccount();
    const { settlement } = await receivePayment({ appId: cred.appId, accountId, amount: 2_000_000n, settle: true });
    const problems = await inRolledBackTransaction(async (tx) => {
      await tx.$executeRaw`SET LOCAL ledger.allow_repair = 'on'`;
      await tx.$executeRaw`UPDATE ledger_entries SET amount_atomic = amount_atomic + 1 WHERE posting_id = ${settlement!} AND line = 2`;
      return (await checkLedger(tx)).problems;
    });
    assert.deepEqual(
      problems.filter((p) => p.postingId === settlement),
      [
        {
          code: 'posting_unbalanced',
          message: `posting ${settlement}: entries for asset 31337:${TOKEN.toLowerCase()} sum to 1, not 0`,
          postingId: settlement,
          chainId: 31337,
          tokenAddress: TOKEN.toLowerCase(),
          sumAtomic: '1',
        },
      ],
    );
    const after = await checkLedger((await getHarness()).db.prisma);
    assert.equal(after.ok, true);
  });

  test('reports an entry on a UPA book that is not attributed to that account (rolled back)', async () => {
    const { cred, accountId } = await appWithAccount();
    const postingId = newId('ledgerPosting');
    const problems = await inRolledBackTransaction(async (tx) => {
      await tx.$executeRaw`INSERT INTO ledger_postings (id, app_id, source_type, source_id, leg, description, fingerprint)
        VALUES (${postingId}, ${cred.appId}, 'deposit', ${newId('deposit')}, 'settlement', 'raw', 'raw')`;
      await tx.$executeRaw`INSERT INTO ledger_entries (id, posting_id, line, book, account_id, chain_id, token_address, asset_symbol, decimals, amount_atomic)
        VALUES (${newId('ledgerEntry')}, ${postingId}, 1, ${`upa:${accountId}:settled`}, NULL, 31337, ${TOKEN}, 'USDC', 6, 10),
               (${newId('ledgerEntry')}, ${postingId}, 2, 'external:31337', NULL, 31337, ${TOKEN}, 'USDC', 6, -10)`;
      return (await checkLedger(tx)).problems;
    });
    assert.deepEqual(
      problems.filter((p) => p.postingId === postingId).map((p) => [p.code, p.book, p.accountId]),
      [['upa_book_misattributed', `upa:${accountId}:settled`, null]],
    );
  });

  test('npm run cli -- ledger check prints one JSON object: exit 0 when ok, exit 1 with the problems when not', async () => {
    const h = await getHarness();
    const { cred, accountId } = await appWithAccount();
    await receivePayment({ appId: cred.appId, accountId, amount: 9_000_000n, settle: true });
    const okRun = await cli(['ledger', 'check']);
    const lines = okRun.stdout.trim().split('\n');
    assert.equal(lines.length, 1, okRun.stdout);
    const report = JSON.parse(lines[0]!);
    assert.deepEqual(Object.keys(report), ['ok', 'postings', 'entries', 'transactions', 'problems']);
    assert.equal(report.ok, true);
    assert.deepEqual(report.problems, []);

    // Commit a balanced posting whose UPA book is misattributed (the triggers can't see that), then repair it.
    const postingId = newId('ledgerPosting');
    await h.db.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`INSERT INTO ledger_postings (id, app_id, source_type, source_id, leg, description, fingerprint)
        VALUES (${postingId}, ${cred.appId}, 'deposit', ${newId('deposit')}, 'settlement', 'raw', 'raw')`;
      await tx.$executeRaw`INSERT INTO ledger_entries (id, posting_id, line, book, account_id, chain_id, token_address, asset_symbol, decimals, amount_atomic)
        VALUES (${newId('ledgerEntry')}, ${postingId}, 1, ${`upa:${accountId}:settled`}, NULL, 31337, ${TOKEN}, 'USDC', 6, 10),
               (${newId('ledgerEntry')}, ${postingId}, 2, 'external:31337', NULL, 31337, ${TOKEN}, 'USDC', 6, -10)`;
    });
    try {
      await assert.rejects(cli(['ledger', 'check']), (err: { code?: number; stdout?: string; stderr?: string }) => {
        assert.equal(err.code, 1);
        const out = (err.stdout ?? '').trim().split('\n');
        assert.equal(out.length, 1, err.stdout);
        const failed = JSON.parse(out[0]!);
        assert.equal(failed.ok, false);
        assert.deepEqual(
          failed.problems.filter((p: { postingId?: string }) => p.postingId === postingId).map((p: { code: string }) => p.code),
          ['upa_book_misattributed'],
        );
        assert.match(err.stderr ?? '', /ledger check found \d+ problem/);
        return true;
      });
    } finally {
      await h.db.prisma.$transaction(async (tx) => {
        await tx.$executeRaw`SET LOCAL ledger.allow_repair = 'on'`;
        await tx.$executeRaw`DELETE FROM ledger_entries WHERE posting_id = ${postingId}`;
        await tx.$executeRaw`DELETE FROM ledger_postings WHERE id = ${postingId}`;
      });
    }
    assert.equal((await checkLedger(h.db.prisma)).ok, true);
  });
});
