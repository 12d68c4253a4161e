import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { keccak256, type Address, type Hash, type Hex } from 'viem';
import { createChainFaults, type ReorgResult } from '../../src/chain/chain-faults';
import { SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import type { SignedTransaction } from '../../src/chain/types';
import { loadLegs, type SettlementLeg } from '../../src/domain/settlement/settlement-legs';
import { mine, newPayer, pokeScanner, receiptOf, tokenBalance } from '../support/chain';
import { getHarness } from '../support/harness';
import { assertLedgerBalanced, createPayment, eventNames, newMerchant, waitForPayment, type Merchant } from '../support/fixtures';
import { assertBooksMatchChain, booksBaseline, endsWithBooksChecked, type BooksBaseline } from '../support/books';

const USDC = 1_000_000n;
const ALERT = 'settlement_dropped';

/**
 * A reorg deeper than the confirmation depth takes a succeeded Payment's settlement off the chain
 * (anvil forgets the replaced blocks' transactions: the harsh case). The payment reconciliation pass
 * finds it and delivers the same settlement again: the recipient is paid once, the books are posted
 * once, the partner hears nothing new, and the alert closes once the settlement is at depth again.
 */

interface Settled {
  m: Merchant;
  paymentId: string;
  escrow: Address;
  escrowIndex: number;
  netAtomic: bigint;
  legs: SettlementLeg[];
  events: string[];
  /** The payer's transfer, signed up front so a test can mine it again after a reorg took it. */
  funding: SignedTransaction;
}

async function settledPayment(amountAtomic: bigint): Promise<Settled> {
  const h = await getHarness();
  const chain = h.chain.chains.get(h.chainId);
  const m = await newMerchant();
  const p = (await createPayment(m, { amount: String(amountAtomic / USDC) })).body.payment;
  const escrow = p.funding.depositAddress.address as Address;
  const funding = await chain.signTokenTransfer({
    from: await newPayer(amountAtomic),
    token: SANDBOX_TOKEN_ADDRESS,
    to: escrow,
    amountAtomic,
  });
  await chain.broadcast(funding);
  await receiptOf(funding.txHash);
  await pokeScanner();
  const done = await waitForPayment(m, p.id, 'succeeded', (x) => x.status === 'succeeded');
  const legs = await loadLegs(h.db.prisma, { type: 'payment', id: p.id });
  assert.deepEqual(
    legs.map((l) => [l.leg, l.status]),
    [
      ['net', 'confirmed'],
      ['platform_fee', 'confirmed'],
      ['partner_fee', 'confirmed'],
    ],
  );
  const row = await h.db.prisma.payment.findUniqueOrThrow({ where: { id: p.id } });
  const netAtomic = BigInt(done.fees.merchantNetAmountAtomic);
  assert.equal(await tokenBalance(m.wallet), netAtomic);
  return { m, paymentId: p.id, escrow, escrowIndex: row.escrowIndex!, netAtomic, legs, events: await eventNames(p.id), funding };
}

/** Replaces every block from `fromBlock` to the head with new ones holding only `include`: deeper than the confirmation depth. */
async function reorgFrom(fromBlock: bigint, include: Hex[] = []): Promise<ReorgResult> {
  const h = await getHarness();
  const faults = createChainFaults(h.rpcUrl);
  const head = (await faults.head()).number;
  const depth = Number(head - fromBlock) + 1;
  assert.ok(depth > h.chain.chains.network(h.chainId).confirmations, `a reorg of ${depth} block(s) is deeper than the confirmation depth`);
  return faults.reorg(depth, { include: include.map((raw) => ({ raw })) });
}

async function blockOf(txHash: string): Promise<bigint> {
  return BigInt((await receiptOf(txHash as Hash)).blockNumber);
}

async function firstLegBlock(legs: SettlementLeg[]): Promise<bigint> {
  const blocks = await Promise.all(legs.map((l) => blockOf(l.txHash)));
  return blocks.reduce((a, b) => (b < a ? b : a));
}

/** On the canonical chain and successful; false when not mined (never waits: for a transaction that must not be). */
async function isMined(txHash: string): Promise<boolean> {
  const h = await getHarness();
  const inclusion = await h.chain.chains.get(h.chainId).getTransactionInclusion(txHash as Hash);
  return inclusion?.success === true;
}

/** anvil answers a broadcast before its automined block is readable: waits for the receipt, then asks. */
async function minedAgain(txHash: string): Promise<boolean> {
  await receiptOf(txHash as Hash);
  return isMined(txHash);
}

async function alertOf(paymentId: string) {
  const h = await getHarness();
  const rows = await h.db.prisma.operatorAlert.findMany({
    where: { kind: ALERT, subject: `payment:${paymentId}` },
    orderBy: { createdAt: 'asc' },
  });
  assert.ok(rows.length <= 1, `one ${ALERT} alert per Payment: ${JSON.stringify(rows)}`);
  return rows[0];
}

async function feeBalances(): Promise<[bigint, bigint]> {
  const h = await getHarness();
  const wallet = (index: number) => h.chain.custody.deriveAddress({ purpose: 'fee', index });
  return [await tokenBalance(wallet(0)), await tokenBalance(wallet(1))];
}

async function pass() {
  const h = await getHarness();
  return h.engine.runPaymentReconciliation({ graceSeconds: 0 });
}

/** After the settlement is delivered again: paid once, posted once, nothing new told to the partner, books right. */
async function assertDeliveredOnce(s: Settled, fees: [bigint, bigint], baseline: BooksBaseline): Promise<void> {
  const h = await getHarness();
  assert.equal(await tokenBalance(s.m.wallet), s.netAtomic, 'the recipient holds its net amount, once');
  assert.equal(await tokenBalance(s.escrow), 0n, 'nothing left at the escrow');
  assert.deepEqual(await feeBalances(), fees, 'each fee paid once');
  const postings = await h.db.prisma.ledgerPosting.findMany({
    where: { sourceType: 'payment', sourceId: s.paymentId },
    select: { leg: true },
  });
  assert.deepEqual(postings.map((p) => p.leg).sort(), ['collection', 'settlement'], 'the settlement is posted once');
  assert.deepEqual(await eventNames(s.paymentId), s.events, 'the partner is told nothing new: the Payment stays succeeded');
  const payment = await h.db.prisma.payment.findUniqueOrThrow({ where: { id: s.paymentId } });
  assert.deepEqual([payment.status, payment.operationalState], ['succeeded', 'normal']);
  await assertLedgerBalanced();
  await assertBooksMatchChain({ baseline });
}

describe('A settlement a deep reorg dropped after the Payment succeeded', () => {
  endsWithBooksChecked();
  let baseline: BooksBaseline;
  before(async () => {
    baseline = await booksBaseline();
  });

  test('is broadcast again byte for byte by the reconciliation pass, reaches the recipient once, and its alerts close at depth', async () => {
    const h = await getHarness();
    const s = await settledPayment(10n * USDC);
    const fees = await feeBalances();

    const reorg = await reorgFrom(await firstLegBlock(s.legs));
    for (const l of s.legs) assert.ok(reorg.dropped.includes(l.txHash as Hash), `leg ${l.leg} dropped by the reorg`);
    assert.equal(await tokenBalance(s.m.wallet), 0n, 'the reorg took the payout away');
    assert.equal(await tokenBalance(s.escrow), 10n * USDC, 'the money is back at the escrow');

    // What the service does today: the ledger pass finds the escrow holding money its books say left.
    const escrowSubject = `${h.chainId}:${SANDBOX_TOKEN_ADDRESS.toLowerCase()}:${s.escrow.toLowerCase()}`;
    await h.engine.runLedgerReconciliation({ recheckAfterSeconds: 1 });
    const difference = await h.db.prisma.operatorAlert.findFirst({
      where: { kind: 'ledger_difference', subject: escrowSubject, resolvedAt: null },
    });
    assert.ok(difference, 'the ledger pass alerts on the escrow');

    const first = await pass();
    assert.ok(first.settlements?.resent.includes(s.paymentId), JSON.stringify(first.settlements));
    for (const l of s.legs) assert.ok(await minedAgain(l.txHash), `leg ${l.leg} mined again with the same hash`);
    const legs = await loadLegs(h.db.prisma, { type: 'payment', id: s.paymentId });
    assert.deepEqual(
      legs.map((l) => [l.id, l.txHash, l.status]),
      s.legs.map((l) => [l.id, l.txHash, 'broadcast']),
      'the same legs, none signed again',
    );
    const open = await alertOf(s.paymentId);
    assert.ok(open && open.resolvedAt === null && open.severity === 'critical', JSON.stringify(open));
    assert.equal((open.details as { state: string }).state, 'resent');

    await mine(h.chain.chains.network(h.chainId).confirmations);
    const second = await pass();
    assert.equal(second.settlements?.resent.includes(s.paymentId), false, 'nothing is sent twice');
    assert.deepEqual(
      (await loadLegs(h.db.prisma, { type: 'payment', id: s.paymentId })).map((l) => l.status),
      ['confirmed', 'confirmed', 'confirmed'],
    );
    assert.ok((await alertOf(s.paymentId))?.resolvedAt instanceof Date, 'the alert is resolved once the settlement is at depth again');

    await h.engine.runLedgerReconciliation({ recheckAfterSeconds: 1 });
    const closed = await h.db.prisma.operatorAlert.findUniqueOrThrow({ where: { id: difference.id } });
    assert.ok(closed.resolvedAt instanceof Date, 'the ledger alert on the escrow is resolved');
    await assertDeliveredOnce(s, fees, baseline);
  });

  test('whose leg lost its nonce to another transaction is held until that transaction is final, then signed again once', async () => {
    const h = await getHarness();
    const s = await settledPayment(10n * USDC);
    const fees = await feeBalances();
    const net = s.legs.find((l) => l.leg === 'net')!;
    // Another transaction of the escrow's key takes the net leg's nonce in the new chain (no token moves).
    const escrowKey = h.chain.custody.signer({ purpose: 'escrow', index: s.escrowIndex });
    const taker = await escrowKey.signTransaction({
      chainId: h.chainId,
      type: 'eip1559',
      nonce: net.nonce,
      to: escrowKey.address,
      value: 0n,
      gas: 21_000n,
      maxFeePerGas: 20_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    });
    const reorg = await reorgFrom(await firstLegBlock(s.legs), [taker]);
    assert.ok(reorg.included.includes(keccak256(taker)));

    // The original can still be mined while the taker can be reorged away: nothing is signed again.
    const held = await pass();
    assert.ok(held.settlements?.held.includes(s.paymentId), JSON.stringify(held.settlements));
    const waiting = await loadLegs(h.db.prisma, { type: 'payment', id: s.paymentId });
    assert.deepEqual(
      waiting.map((l) => [l.txHash, l.status]),
      s.legs.map((l) => [l.txHash, 'broadcast']),
      'no leg replaced or signed again',
    );
    assert.equal(await isMined(net.txHash), false);
    for (const l of s.legs.filter((x) => x.leg !== 'net'))
      assert.ok(await minedAgain(l.txHash), `leg ${l.leg} (its nonce still free) mined again`);
    assert.equal(await tokenBalance(s.m.wallet), 0n, 'the recipient is not paid while the original could still land');
    const alert = await alertOf(s.paymentId);
    assert.ok(alert && alert.resolvedAt === null);
    assert.equal((alert.details as { state: string }).state, 'waiting_for_finality');

    // The taker's block is final: the original can never be mined, and the leg is signed again.
    await mine(70);
    const resigned = await pass();
    assert.ok(resigned.settlements?.resent.includes(s.paymentId), JSON.stringify(resigned.settlements));
    await mine(h.chain.chains.network(h.chainId).confirmations);
    await pass();
    const legs = await loadLegs(h.db.prisma, { type: 'payment', id: s.paymentId });
    assert.deepEqual(
      legs.map((l) => [l.leg, l.status]),
      [
        ['net', 'replaced'],
        ['platform_fee', 'confirmed'],
        ['partner_fee', 'confirmed'],
        ['net', 'confirmed'],
      ],
    );
    assert.equal(legs[0]!.txHash, net.txHash);
    assert.ok(legs[3]!.nonce > net.nonce, 'a new nonce');
    assert.ok((await alertOf(s.paymentId))?.resolvedAt instanceof Date);
    await assertDeliveredOnce(s, fees, baseline);
  });

  test("is held while the money is not at the escrow (the payer's transfer went too), and sent once it is back", async () => {
    const h = await getHarness();
    const chain = h.chain.chains.get(h.chainId);
    const s = await settledPayment(10n * USDC);
    const fees = await feeBalances();

    await reorgFrom(await blockOf(s.funding.txHash));
    assert.equal(await tokenBalance(s.escrow), 0n, "neither the payer's money nor the payout is on the chain");

    const short = await pass();
    assert.ok(short.settlements?.held.includes(s.paymentId), JSON.stringify(short.settlements));
    for (const l of s.legs) assert.equal(await isMined(l.txHash), false, `leg ${l.leg} not sent without the money to pay it`);
    const alert = await alertOf(s.paymentId);
    assert.equal((alert?.details as { state: string }).state, 'funds_missing');

    // The payer's transaction is mined again: the escrow holds the money, and the settlement follows.
    await chain.broadcast(s.funding);
    await receiptOf(s.funding.txHash);
    const resent = await pass();
    assert.ok(resent.settlements?.resent.includes(s.paymentId), JSON.stringify(resent.settlements));
    await mine(h.chain.chains.network(h.chainId).confirmations);
    await pass();
    assert.deepEqual(
      (await loadLegs(h.db.prisma, { type: 'payment', id: s.paymentId })).map((l) => [l.txHash, l.status]),
      s.legs.map((l) => [l.txHash, 'confirmed']),
    );
    assert.ok((await alertOf(s.paymentId))?.resolvedAt instanceof Date);
    await assertDeliveredOnce(s, fees, baseline);
  });
});
