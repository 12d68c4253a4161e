import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Hex } from 'viem';
import { SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { bookFor, preparePosting } from '../../src/domain/ledger/ledger';
import { collectionPosting } from '../../src/domain/payments/payment-postings';
import { authorizeVaultFunding } from '../../src/domain/vaults/vault-funding';
import { followVaultReceipts, takeVaultTransfer } from '../../src/domain/vaults/vault-receipts';
import { vaultFundingPosting, vaultReceiptPosting, vaultReceiptReversalPosting } from '../../src/domain/vaults/vault-postings';
import { createVaultActivities } from '../../activities/vaults';
import type { Payment } from '../../src/generated/prisma/client';
import { getHarness } from '../support/harness';
import { eventually, mine, newPayer, payTo, pokeScanner, receiptOf, rpc, tokenBalance, withMiningPaused } from '../support/chain';
import { assertBooksMatchChain, booksBaseline, endsWithBooksChecked, reconcileBooks } from '../support/books';
import { assertLedgerBalanced, createPayment, newMerchant, waitForPayment, newVault } from '../support/fixtures';
import { activeVault } from './support';

const USDC = (n: number) => BigInt(n) * 1_000_000n;
const actor = { type: 'client' as const, id: null };

async function sweep() {
  const h = await getHarness();
  return followVaultReceipts({ prisma: h.db.prisma, chains: h.chain.chains });
}

async function vaultBook(vaultId: string): Promise<bigint> {
  const h = await getHarness();
  const sum = await h.db.prisma.ledgerEntry.aggregate({ where: { book: bookFor('vault_custody', vaultId) }, _sum: { amountAtomic: true } });
  return BigInt(sum._sum.amountAtomic?.toFixed() ?? '0');
}

async function vaultPostings(vaultId: string): Promise<string[]> {
  const h = await getHarness();
  const rows = await h.db.prisma.ledgerPosting.findMany({
    where: { sourceType: 'vault', sourceId: vaultId },
    orderBy: { createdAt: 'asc' },
  });
  return rows.map((r) => r.leg);
}

async function receiptsOf(vaultId: string, count: number, status?: string) {
  const h = await getHarness();
  return eventually(
    async () => {
      const rows = await h.db.prisma.vaultReceipt.findMany({
        where: { vaultId, ...(status ? { status } : {}) },
        orderBy: { logIndex: 'asc' },
      });
      return rows.length >= count ? rows : undefined;
    },
    `${count} receipts of ${vaultId}`,
    { mine: false },
  );
}

/** Sweeps until the vault's receipts are all past 'seen' (a pass may find a transfer not deep yet). */
async function sweepUntilSettled(vaultId: string) {
  const h = await getHarness();
  return eventually(async () => {
    await sweep();
    return (await h.db.prisma.vaultReceipt.count({ where: { vaultId, status: 'seen' } })) === 0;
  }, 'vault receipts followed');
}

describe('Vault ledger: the postings (pure)', () => {
  test('property: over any receipts, reversals and fundings, every posting balances and each book equals its address on chain', () => {
    const asset = { chainId: 31337, tokenAddress: SANDBOX_TOKEN_ADDRESS, symbol: 'USDC', decimals: 6 };
    fc.assert(
      fc.property(
        fc.array(fc.record({ amount: fc.bigInt({ min: 1n, max: 10n ** 15n }), reorged: fc.boolean() }), { minLength: 1, maxLength: 12 }),
        fc.array(fc.bigInt({ min: 1n, max: 10n ** 15n }), { maxLength: 6 }),
        (receipts, fundings) => {
          const books = new Map<string, bigint>();
          const post = (p: Parameters<typeof preparePosting>[0]) => {
            for (const e of preparePosting(p).entries) books.set(e.book, (books.get(e.book) ?? 0n) + e.amountAtomic);
          };
          let vaultOnChain = 0n;
          let escrowsOnChain = 0n;
          receipts.forEach((r, i) => {
            const facts = {
              id: `vault_rcpt_${i}`,
              vaultId: 'vault_v',
              appId: 'app_a',
              chainId: 31337,
              tokenAddress: SANDBOX_TOKEN_ADDRESS,
              assetSymbol: 'USDC',
              decimals: 6,
              amountAtomic: r.amount,
              txHash: `0x${i}`,
            };
            post(vaultReceiptPosting(facts));
            if (r.reorged) post(vaultReceiptReversalPosting(facts));
            else vaultOnChain += r.amount;
          });
          fundings.forEach((amount, i) => {
            if (amount > vaultOnChain) return; // the policy check: never more than the vault holds
            const paymentId = `payment_${i}`;
            post(
              vaultFundingPosting({ id: `pay_funding_${i}`, vaultId: 'vault_v', appId: 'app_a', paymentId, amountAtomic: amount, asset }),
            );
            post(
              collectionPosting({
                id: paymentId,
                appId: 'app_a',
                chainId: 31337,
                tokenAddress: SANDBOX_TOKEN_ADDRESS,
                assetCode: 'USDC',
                decimals: 6,
                amountAtomic: amount,
                recipientAccountId: 'acct_r',
                senderAccountId: null,
                description: null,
              } as unknown as Payment),
            );
            vaultOnChain -= amount;
            escrowsOnChain += amount;
          });
          const escrows = [...books].filter(([b]) => b.startsWith('escrow:')).reduce((s, [, v]) => s + v, 0n);
          assert.equal(books.get('custody:vault:vault_v') ?? 0n, vaultOnChain);
          assert.equal(escrows, escrowsOnChain);
          // What came from outside is what the service holds: nothing counted twice.
          assert.equal(-(books.get('external:31337') ?? 0n), vaultOnChain + escrowsOnChain);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('Vault ledger: inflows, funding and reconcile on chain', () => {
  endsWithBooksChecked();

  test('an inflow is posted once, at the confirmation depth, and a rescan or a second pass posts nothing more', async () => {
    const h = await getHarness();
    const { vault } = await newVault();
    const payer = await newPayer(USDC(5));
    const txHash = await payTo(payer, vault.address, USDC(5));
    const [seen] = await receiptsOf(vault.id, 1);
    assert.equal(seen!.status, 'seen');
    assert.equal(seen!.txHash, txHash.toLowerCase());
    // Not deep yet (automined at the head): nothing posted, the amount is in flight for reconcile.
    const head = await h.chain.chains.get(h.chainId).getBlockNumber();
    if (head - BigInt(seen!.blockNumber) + 1n < 2n) {
      await sweep();
      assert.deepEqual(await vaultPostings(vault.id), []);
      const inFlight = (await reconcileBooks()).inFlight.filter((f) => f.kind === 'vault_receipt' && f.sourceId === vault.id);
      assert.deepEqual(
        inFlight.map((f) => f.amountAtomic),
        [USDC(5).toString()],
      );
    }
    await mine(2);
    await sweepUntilSettled(vault.id);
    assert.deepEqual(await vaultPostings(vault.id), [`receipt:${seen!.id}`]);
    assert.equal(await vaultBook(vault.id), USDC(5));
    // The scanner offering it again (a rescan, a re-mined log), and more passes: still one receipt, one posting.
    const transfer = {
      chainId: h.chainId,
      txHash,
      logIndex: seen!.logIndex,
      ordinal: seen!.ordinal,
      blockNumber: BigInt(seen!.blockNumber),
      blockHash: '0x' as Hex,
      token: SANDBOX_TOKEN_ADDRESS,
      from: payer.address,
      to: vault.address,
      amountAtomic: USDC(5),
    };
    assert.equal(await takeVaultTransfer({ prisma: h.db.prisma, chains: h.chain.chains }, transfer), true);
    await sweep();
    await sweep();
    assert.equal(await h.db.prisma.vaultReceipt.count({ where: { vaultId: vault.id } }), 1);
    assert.deepEqual(await vaultPostings(vault.id), [`receipt:${seen!.id}`]);
    assert.equal(await vaultBook(vault.id), await tokenBalance(vault.address));
  });

  test('the scheduled payment reconciliation pass is what posts a receipt', async () => {
    const h = await getHarness();
    const { vault } = await newVault();
    await payTo(await newPayer(USDC(2)), vault.address, USDC(2));
    const [seen] = await receiptsOf(vault.id, 1);
    await mine(2);
    const pass = await h.engine.runPaymentReconciliation({ graceSeconds: 3600 });
    assert.ok(pass.vaultReceipts, 'the pass follows vault receipts');
    assert.ok(pass.vaultReceipts.posted >= 1, JSON.stringify(pass.vaultReceipts));
    assert.equal((await h.db.prisma.vaultReceipt.findUniqueOrThrow({ where: { id: seen!.id } })).status, 'posted');
    assert.deepEqual(await vaultPostings(vault.id), [`receipt:${seen!.id}`]);
  });

  test('several transfers in one block are each posted once', async () => {
    const h = await getHarness();
    const chain = h.chain.chains.get(h.chainId);
    const { vault } = await newVault();
    const amounts = [USDC(1), USDC(2), USDC(3)];
    const payers = [];
    for (const a of amounts) payers.push(await newPayer(a)); // one funder: its transactions in turn
    const signed = await Promise.all(
      payers.map((p, i) =>
        chain.signTokenTransfer({ from: p, token: SANDBOX_TOKEN_ADDRESS, to: vault.address, amountAtomic: amounts[i]! }),
      ),
    );
    await withMiningPaused(async () => {
      for (const s of signed) await rpc('eth_sendRawTransaction', [s.serialized]);
      await rpc('evm_mine');
    });
    const blocks = await Promise.all(signed.map((s) => receiptOf(s.txHash)));
    assert.equal(new Set(blocks.map((b) => b.blockHash)).size, 1, 'one block');
    await pokeScanner();
    const seen = await receiptsOf(vault.id, 3);
    assert.equal(new Set(seen.map((r) => r.blockNumber)).size, 1);
    await mine(2);
    await sweepUntilSettled(vault.id);
    const receipts = await h.db.prisma.vaultReceipt.findMany({ where: { vaultId: vault.id } });
    assert.deepEqual(
      receipts.map((r) => r.status),
      ['posted', 'posted', 'posted'],
    );
    assert.deepEqual((await vaultPostings(vault.id)).sort(), receipts.map((r) => `receipt:${r.id}`).sort());
    assert.equal(await vaultBook(vault.id), USDC(6));
    assert.equal(await tokenBalance(vault.address), USDC(6));
  });

  test('a transfer reorged out before the depth posts nothing; one reorged out after posting is reversed', async () => {
    const h = await getHarness();
    const chain = h.chain.chains.get(h.chainId);
    const { vault } = await newVault();
    const payer = await newPayer(USDC(8));
    const baseline = await booksBaseline();

    // Before the depth: seen, then gone; the pass drops it.
    const early = await chain.signTokenTransfer({ from: payer, token: SANDBOX_TOKEN_ADDRESS, to: vault.address, amountAtomic: USDC(4) });
    let snapshot = await rpc<string>('evm_snapshot');
    await chain.broadcast(early);
    await receiptOf(early.txHash);
    await pokeScanner();
    const [seen] = await receiptsOf(vault.id, 1);
    assert.equal(await rpc('evm_revert', [snapshot]), true);
    await mine(3);
    await pokeScanner();
    await sweepUntilSettled(vault.id);
    assert.equal((await h.db.prisma.vaultReceipt.findUniqueOrThrow({ where: { id: seen!.id } })).status, 'dropped');
    assert.deepEqual(await vaultPostings(vault.id), []);
    assert.equal(await tokenBalance(vault.address), 0n);

    // After posting: a reorg deeper than the depth removes it; the pass reverses the posting.
    const late = await chain.signTokenTransfer({ from: payer, token: SANDBOX_TOKEN_ADDRESS, to: vault.address, amountAtomic: USDC(3) });
    snapshot = await rpc<string>('evm_snapshot');
    await chain.broadcast(late);
    await receiptOf(late.txHash);
    await pokeScanner();
    const posted = await eventually(async () => {
      await sweep();
      return (
        (await h.db.prisma.vaultReceipt.findFirst({ where: { vaultId: vault.id, txHash: late.txHash.toLowerCase(), status: 'posted' } })) ??
        undefined
      );
    }, 'the late receipt posted');
    assert.equal(await vaultBook(vault.id), USDC(3));
    assert.equal(await rpc('evm_revert', [snapshot]), true);
    await mine(5);
    await pokeScanner();
    await eventually(async () => {
      await sweep();
      return (await h.db.prisma.vaultReceipt.findUniqueOrThrow({ where: { id: posted.id } })).status === 'reversed';
    }, 'the late receipt reversed');
    assert.deepEqual(await vaultPostings(vault.id), [`receipt:${posted.id}`, `receipt_reversal:${posted.id}`]);
    assert.equal(await vaultBook(vault.id), 0n);
    await assertBooksMatchChain({ baseline });
  });

  test('a vault-funded Payment: the funding posts with its confirmation, and the books stay balanced and equal to the chain', async () => {
    const h = await getHarness();
    const baseline = await booksBaseline();
    const v = await activeVault(USDC(100).toString());
    await payTo(await newPayer(USDC(30)), v.vault.address, USDC(30));
    await receiptsOf(v.vault.id, 1); // seen by the scanner: in flight at the vault until posted
    const merchant = await newMerchant(v.cred);
    const created = await createPayment(merchant, { amount: '7.25' });
    assert.equal(created.status, 201, created.text);
    const paymentId = created.body.payment.id as string;
    const { fundingOperation } = await authorizeVaultFunding(
      { prisma: h.db.prisma, chains: h.chain.chains },
      { paymentId, payerAccountId: v.accountId, actor },
    );
    const settlement = { prisma: h.db.prisma, chains: h.chain.chains, custody: h.chain.custody };
    const activities = createVaultActivities({ prisma: h.db.prisma, chains: h.chain.chains, settlement });
    await activities.sendVaultFunding({ fundingOperationId: fundingOperation.id });
    // Mined, not confirmed: no funding posting yet; reconcile counts the leg in flight at the vault only
    // (the escrow may differ for a moment: the scanner may not have read the transfer there yet).
    await eventually(async () => (await tokenBalance(v.vault.address)) === USDC(30) - 7_250_000n, 'the leg mined', { mine: false });
    assert.ok(!(await vaultPostings(v.vault.id)).some((l) => l.startsWith('funding:')));
    const mid = await reconcileBooks();
    const legInFlight = mid.inFlight.filter(
      (f) => f.kind === 'settlement_leg' && f.sourceType === 'vault_funding' && f.sourceId === fundingOperation.id,
    );
    assert.deepEqual(
      legInFlight.map((f) => [f.address.toLowerCase(), f.amountAtomic]),
      [[v.vault.address.toLowerCase(), '-7250000']],
    );
    assert.ok(!mid.differences.some((d) => d.address?.toLowerCase() === v.vault.address.toLowerCase()), JSON.stringify(mid.differences));
    await pokeScanner();
    await waitForPayment(merchant, paymentId, 'succeeded', (p) => p.status === 'succeeded');
    const confirmed = await eventually(async () => {
      const op = await activities.checkVaultFunding({ fundingOperationId: fundingOperation.id, confirmations: 2 });
      return op.status === 'confirmed' ? op : undefined;
    }, 'funding confirmed');
    assert.ok(confirmed.confirmedAt);
    // Confirmed and posted together; a repeated check posts nothing more.
    await activities.checkVaultFunding({ fundingOperationId: fundingOperation.id, confirmations: 2 });
    const funding = await h.db.prisma.ledgerPosting.findUniqueOrThrow({
      where: { sourceType_sourceId_leg: { sourceType: 'vault', sourceId: v.vault.id, leg: `funding:${fundingOperation.id}` } },
      include: { entries: { orderBy: { line: 'asc' } } },
    });
    assert.deepEqual(
      funding.entries.map((e) => [e.book, e.amountAtomic.toFixed(), e.accountId]),
      [
        [`custody:vault:${v.vault.id}`, '-7250000', null],
        ['external:31337', '7250000', null],
      ],
    );
    await sweepUntilSettled(v.vault.id);
    assert.equal(await vaultBook(v.vault.id), USDC(30) - 7_250_000n);
    assert.equal(await tokenBalance(v.vault.address), USDC(30) - 7_250_000n);
    // The escrow: collected by the Payment's own posting, then settled; the vault's money counted once.
    const escrow = await h.db.prisma.ledgerEntry.aggregate({ where: { book: bookFor('escrow', paymentId) }, _sum: { amountAtomic: true } });
    assert.equal(escrow._sum.amountAtomic?.toFixed(), '0');
    const result = await assertBooksMatchChain({ baseline });
    assert.ok(
      result.differences.every(
        (d) => d.purpose !== 'vault' || baseline.has(`${d.chainId}:${d.token.toLowerCase()}:${(d.address ?? '').toLowerCase()}`),
      ),
    );
    await assertLedgerBalanced();
  });
});
