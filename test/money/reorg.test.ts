import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Address } from 'viem';
import { SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { mine, newPayer, pokeScanner, receiptOf, rpc, tokenBalance, withMiningPaused } from '../support/chain';
import { getHarness } from '../support/harness';
import { assertLedgerBalanced, createPayment, newMerchant, waitForPayment } from '../support/fixtures';
import { endsWithBooksChecked } from '../support/books';
import { until } from '../support/until';

const USDC = 1_000_000n;

/**
 * Finding 6: a one-block reorg mines the paying transfer again, at log index 1 (another transfer
 * went first). The scanner must notice the reorg by itself (no test restarts it), read the new block,
 * and the Payment must recognise its transfer there: counted once, and paid out.
 */

describe('Reorgs', () => {
  endsWithBooksChecked();

  test('a paying transfer that a one-block reorg mines again at another log index is still the same transfer, counted once', async () => {
    const h = await getHarness();
    const chain = h.chain.chains.get(h.chainId);
    const m = await newMerchant();
    const p = (await createPayment(m, { amount: '10' })).body.payment;
    const escrow = p.funding.depositAddress.address as Address;
    const payer = await newPayer(10n * USDC);
    const other = await newPayer(1n * USDC);
    const paying = await chain.signTokenTransfer({ from: payer, token: SANDBOX_TOKEN_ADDRESS, to: escrow, amountAtomic: 10n * USDC });
    const otherTx = await chain.signTokenTransfer({
      from: other,
      token: SANDBOX_TOKEN_ADDRESS,
      to: other.address,
      amountAtomic: 1n * USDC,
    });

    const snapshot = await rpc<string>('evm_snapshot');
    await chain.broadcast(paying);
    const minedAt = await receiptOf(paying.txHash);
    assert.equal(Number(minedAt.logs[0]!.logIndex), 0);
    await pokeScanner();
    // Seen, one block deep of two: processing lasts only while no block is mined.
    await waitForPayment(m, p.id, 'seen', (x) => x.status === 'processing', { mine: false });

    // The block is replaced: same height, another transfer first, the paying transfer at log index 1.
    assert.equal(await rpc('evm_revert', [snapshot]), true);
    await withMiningPaused(async () => {
      await rpc('eth_sendRawTransaction', [otherTx.serialized]);
      await rpc('eth_sendRawTransaction', [paying.serialized]);
      await rpc('evm_mine');
    });
    const remined = await receiptOf(paying.txHash);
    assert.equal(remined.blockNumber, minedAt.blockNumber, 'the same height');
    assert.notEqual(remined.blockHash, minedAt.blockHash, 'another block: the chain reorganised');
    assert.equal(Number(remined.logs[0]!.logIndex), 1);
    await mine(2);

    const done = await waitForPayment(m, p.id, 'succeeded after the reorg', (x) => x.status === 'succeeded');
    assert.equal(done.incidentRecoverySummary.count, 0);
    const transfers = await h.db.prisma.paymentTransfer.findMany({ where: { paymentId: p.id } });
    assert.deepEqual(
      transfers.map((t) => [t.txHash, t.ordinal, t.status, t.role]),
      [[paying.txHash.toLowerCase(), 0, 'confirmed', 'funding']],
    );
    assert.equal(await tokenBalance(escrow), 0n, 'paid out once, nothing left or missing at the escrow');
    assert.equal(await tokenBalance(m.wallet), BigInt(done.fees.merchantNetAmountAtomic));
    await assertLedgerBalanced();
  });

  test('a paying transfer a reorg dropped is followed again when the chain mines it again, and counted once', async () => {
    const h = await getHarness();
    const chain = h.chain.chains.get(h.chainId);
    const m = await newMerchant();
    const p = (await createPayment(m, { amount: '10' })).body.payment;
    const escrow = p.funding.depositAddress.address as Address;
    const payer = await newPayer(10n * USDC);
    const paying = await chain.signTokenTransfer({ from: payer, token: SANDBOX_TOKEN_ADDRESS, to: escrow, amountAtomic: 10n * USDC });

    // Mined one block deep and no deeper (confirmations: 2) until the reorg: no other block comes meanwhile.
    const snapshot = await rpc<string>('evm_snapshot');
    await withMiningPaused(async () => {
      await chain.broadcast(paying);
      await rpc('evm_mine');
      await receiptOf(paying.txHash);
      await pokeScanner();
      // Its rounds must not mine: a block would take the transfer to the depth that confirms it.
      await waitForPayment(m, p.id, 'seen', (x) => x.status === 'processing', { mine: false });
      // The reorg takes its block away and the new blocks don't hold it: the Payment drops it.
      assert.equal(await rpc('evm_revert', [snapshot]), true);
      await mine(2);
    });
    await pokeScanner();
    const transferStatus = async () =>
      (await h.db.prisma.paymentTransfer.findFirst({ where: { paymentId: p.id }, select: { status: true } }))?.status;
    await until(async (saw) => {
      const status = await transferStatus();
      saw(status);
      return status === 'dropped';
    }, 'the transfer dropped');

    // The same signed transaction is mined again: the same transfer, followed again.
    await chain.broadcast(paying);
    await receiptOf(paying.txHash);
    await mine(2);
    await pokeScanner();
    const done = await waitForPayment(m, p.id, 'succeeded once mined again', (x) => x.status === 'succeeded');
    assert.equal(done.incidentRecoverySummary.count, 0);
    const transfers = await h.db.prisma.paymentTransfer.findMany({ where: { paymentId: p.id } });
    assert.deepEqual(
      transfers.map((t) => [t.txHash, t.ordinal, t.status, t.role]),
      [[paying.txHash.toLowerCase(), 0, 'confirmed', 'funding']],
    );
    assert.equal(await tokenBalance(escrow), 0n, 'paid out once');
    assert.equal(await tokenBalance(m.wallet), BigInt(done.fees.merchantNetAmountAtomic));
    await assertLedgerBalanced();
  });
});
