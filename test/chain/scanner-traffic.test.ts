import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Address } from 'viem';
import { createChainFaults } from '../../src/chain/chain-faults';
import { prepareTokenSenders, randomAddress, type TokenSenders, type TokenTransferOrder } from '../../src/chain/sandbox-traffic';
import type { Transfer } from '../../src/chain/types';
import { scanRange, type ScanDeps } from '../../src/domain/chain/chain-scan';
import { ownedRecipients } from '../../src/domain/chain/our-addresses';
import { newApp } from '../support/api-client';
import { eventually, receiptOf } from '../support/chain';
import { getHarness } from '../support/harness';
import { createPayment, newMerchant, newAccountWithWallet, newDepositAddress } from '../support/fixtures';
import { USDC } from '../deposits/helpers';

const FOREIGN = 120;

/**
 * Until these Payments have succeeded and the deposit address's deposits settled: their settlements
 * pay the shared fee wallets, which later files measure, so none may still be on its way.
 */
async function settled(paymentIds: string[], depositAddressIds: string[] = []): Promise<void> {
  const h = await getHarness();
  await eventually(async (saw) => {
    const payments = await h.db.prisma.payment.findMany({ where: { id: { in: paymentIds } }, select: { status: true } });
    const deposits = await h.db.prisma.deposit.findMany({
      where: { depositAddressId: { in: depositAddressIds } },
      select: { status: true },
    });
    const open = [...payments.filter((p) => p.status !== 'succeeded'), ...deposits.filter((d) => d.status !== 'settled')];
    saw({ payments: payments.map((p) => p.status), deposits: deposits.map((d) => d.status) });
    return open.length === 0 && deposits.length === depositAddressIds.length;
  }, 'the Payments succeeded and the deposits settled');
}

/** A scan's deps whose one taker only records what it was offered (and owns nothing). */
async function recordingScan(offered: Transfer[], overrides: Partial<ScanDeps> = {}): Promise<ScanDeps> {
  const h = await getHarness();
  return {
    chains: h.chain.chains,
    takers: [
      async (t) => {
        offered.push(t);
        return false;
      },
    ],
    owned: (recipients) => ownedRecipients(h.db.prisma, recipients),
    batchBlocks: 1,
    ...overrides,
  };
}

describe('The scanner under mainnet-shaped traffic: a block of mostly foreign transfers', () => {
  let senders: TokenSenders;
  let block: bigint;
  let ours: { payments: string[]; deposit: string };
  const toSettle = { payments: [] as string[], depositAddresses: [] as string[] };
  after(() => settled(toSettle.payments, toSettle.depositAddresses));

  before(async () => {
    const h = await getHarness();
    senders = await prepareTokenSenders({ rpcUrl: h.rpcUrl, count: 6, tokenAtomicEach: 1_000n * USDC });
    const m = await newMerchant();
    const payments = await Promise.all([1, 2].map(async () => (await createPayment(m, { amount: '1' })).body.payment));
    const cred = await newApp();
    const { accountId } = await newAccountWithWallet(cred);
    const deposit = await newDepositAddress(cred, accountId);
    ours = { payments: payments.map((p) => p.funding.depositAddress.address.toLowerCase()), deposit: deposit.address.toLowerCase() };
    toSettle.payments.push(...payments.map((p) => p.id as string));
    toSettle.depositAddresses.push(deposit.id);
    const orders: TokenTransferOrder[] = Array.from({ length: FOREIGN }, (_, i) => ({
      from: senders.senders[i % 5]!,
      to: randomAddress(),
      amountAtomic: BigInt(i + 1) * 1000n,
    }));
    // Ours among them, from the same senders as the foreign ones.
    orders.splice(17, 0, { from: senders.senders[5]!, to: ours.payments[0] as Address, amountAtomic: USDC });
    orders.splice(60, 0, { from: senders.senders[5]!, to: ours.deposit as Address, amountAtomic: 20n * USDC });
    orders.splice(101, 0, { from: senders.senders[5]!, to: ours.payments[1] as Address, amountAtomic: USDC });
    const mined = await createChainFaults(h.rpcUrl).inOneBlock(() => senders.send(orders));
    block = mined.block.number;
    assert.equal(mined.positions.length, FOREIGN + 3);
    assert.ok(
      mined.positions.every((p) => p.blockNumber === block),
      'every transfer in one block',
    );
  });

  test("the per-transfer owners are asked about our recipients only: a foreign transfer costs no owner's lookup", async () => {
    const offered: Transfer[] = [];
    const result = await scanRange(await recordingScan(offered), { chainId: (await getHarness()).chainId, fromBlock: block.toString() });
    assert.equal(result.nextFromBlock, (block + 1n).toString());
    assert.deepEqual(offered.map((t) => t.to.toLowerCase()).sort(), [...ours.payments, ours.deposit].sort());
  });

  test('the running scanner credits exactly ours in that block: both Payments and the deposit, nothing else', async () => {
    const h = await getHarness();
    const prisma = h.db.prisma;
    const credited = await eventually(async (saw) => {
      const payments = await prisma.paymentTransfer.findMany({
        where: { blockNumber: block },
        select: { payment: { select: { escrowAddress: true } } },
      });
      const deposits = await prisma.deposit.findMany({ where: { blockNumber: block }, select: { depositAddressId: true } });
      const addresses = await prisma.depositAddress.findMany({
        where: { id: { in: deposits.map((d) => d.depositAddressId) } },
        select: { address: true },
      });
      const seen = { payments: payments.map((p) => p.payment.escrowAddress).sort(), deposits: addresses.map((a) => a.address) };
      saw(seen);
      return seen.payments.length === 2 && seen.deposits.length === 1 ? seen : undefined;
    }, 'our three transfers credited');
    assert.deepEqual(credited, { payments: [...ours.payments].sort(), deposits: [ours.deposit] });
    assert.equal(await prisma.vaultReceipt.count({ where: { blockNumber: block.toString() } }), 0);
  });

  test('an owner lookup that fails fails the scan: its transfers are never taken for foreign and skipped', async () => {
    const offered: Transfer[] = [];
    const deps = await recordingScan(offered, {
      owned: async () => {
        throw new Error('Connection terminated unexpectedly');
      },
    });
    await assert.rejects(scanRange(deps, { chainId: (await getHarness()).chainId, fromBlock: block.toString() }), /Connection terminated/);
    assert.equal(offered.length, 0);
  });
});

describe('An address created while the scanner is reading the chain', () => {
  test('each Payment created and paid at once, while scans run back to back, is offered to its owner', async () => {
    const h = await getHarness();
    const senders = await prepareTokenSenders({ rpcUrl: h.rpcUrl, count: 1, tokenAtomicEach: 100n * USDC });
    const chain = h.chain.chains.get(h.chainId);
    const offered: Transfer[] = [];
    const deps = await recordingScan(offered, { batchBlocks: 500 });
    let from = (await chain.getBlockNumber()) + 1n;
    // The block of the last transfer, once sent: the scans go on until they have read it.
    let lastBlock: bigint | null = null;
    // Scans back to back, each from where the last ended (as the scanner does).
    const scanning = (async () => {
      while (lastBlock === null || from <= lastBlock) {
        const r = await scanRange(deps, { chainId: h.chainId, fromBlock: from.toString() });
        from = BigInt(r.nextFromBlock);
      }
    })();
    const escrows: string[] = [];
    const paymentIds: string[] = [];
    try {
      const m = await newMerchant();
      for (let i = 0; i < 8; i += 1) {
        const p = (await createPayment(m, { amount: '1' })).body.payment;
        const escrow = p.funding.depositAddress.address.toLowerCase();
        escrows.push(escrow);
        paymentIds.push(p.id);
        // Broadcast at once (anvil automines): the scan already running may read its block.
        const [hash] = await senders.send([{ from: senders.senders[0]!, to: escrow as Address, amountAtomic: USDC }]);
        if (i === 7) lastBlock = BigInt((await receiptOf(hash!)).blockNumber);
      }
    } finally {
      lastBlock ??= await chain.getBlockNumber();
      await scanning;
    }
    assert.deepEqual(offered.map((t) => t.to.toLowerCase()).sort(), [...escrows].sort());
    await settled(paymentIds);
  });
});
