import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseTransaction, type Address, type Hex } from 'viem';
import { type BaseFeeHold, createChainFaults } from '../../src/chain/chain-faults';
import { createEvmChain } from '../../src/chain/evm';
import { FEE_ABOVE_CAP } from '../../workflows/contracts/settlement';
import { paymentWorkflowId } from '../../workflows/contracts/payment';
import { FEE_CAP_WAIT_MS } from '../../workflows/fee-cap';
import { skipTime } from '../support/workflow-result';
import { poll } from '../support/until';
import { SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { authorizeVaultFunding } from '../../src/domain/vaults/vault-funding';
import type { SettlementSource } from '../../src/domain/settlement/settlement-legs';
import { call } from '../support/api-client';
import { endsWithBooksChecked } from '../support/books';
import { eventually, mine, newPayer, payTo, pokeScanner, rpc, tokenBalance } from '../support/chain';
import { getHarness } from '../support/harness';
import { assertMinedExactlyWhenLive, legsOf, replacedUnderRisingBaseFee } from '../support/rising-base-fee';
import {
  assertLedgerBalanced,
  createPayment,
  eventNames,
  getPayment,
  newAccountWithWallet,
  newDepositAddress,
  newMerchant,
  waitForPayment,
  type Merchant,
} from '../support/fixtures';
import { waitForDeposits } from '../deposits/helpers';
import { fundedVault, paidPayment, post, USDC, waitForReturn } from '../refunds/support';
import { activeVault } from '../vaults/support';

const GWEI = 1_000_000_000n;

/**
 * A busy hour on Ethereum: the base fee held at 40, 80 and 150 gwei (far under the 500 gwei cap) while
 * a Payment, a deposit, a refund and a vault funding settle. No payer holds gas beforehand: each is
 * topped up by what its legs may cost, so every leg is accepted and mined, and nothing is held for an
 * operator. Each leg was signed under the held fee.
 */
describe('Money moves through a fee spike', () => {
  endsWithBooksChecked();

  for (const gwei of [40n, 80n, 150n]) {
    test(`base fee held at ${gwei} gwei: a Payment, a deposit, a refund and a vault funding settle, each leg paying the held fee; nothing is held`, async () => {
      const h = await getHarness();
      const m = await newMerchant();
      const baseline = await withBaseFeeHeld(gwei * GWEI, async () => {
        // One after another: the test wallets are all funded by anvil's one deployer, whose nonces
        // anvil hands out per request, so two fundings at once can take the same one.
        for (const flow of [() => paymentSettles(m), depositSettles, () => refundConfirms(m), vaultFundingConfirms]) {
          await assertLegsPaidTheHeldFee(await flow(), gwei * GWEI);
        }
      });
      assert.equal(await h.chain.chains.get(h.chainId).getBaseFee(), baseline, 'the base fee is back where the test found it');
      await assertLedgerBalanced();
    });
  }

  test('a base fee above the cap: the settlement signs nothing and waits, spending no try and never held, and settles once the fee comes down', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    // Short backoffs: with them the old rule spent the whole retry budget within seconds of workflow time.
    h.policies.payment = { retryBackoffSeconds: 0.2 };
    let p;
    try {
      p = (await createPayment(m, { amount: '3' })).body.payment;
    } finally {
      delete h.policies.payment;
    }
    const payer = await newPayer(USDC(3));
    // The payer's own wallet offers what the busy hour asks; the service's cap (500 gwei) stops its legs.
    const payerChain = createEvmChain({
      chainId: h.chainId,
      rpcUrl: h.rpcUrl,
      gas: { maxFeePerGasWei: 5_000n * GWEI, priorityFeeWei: GWEI },
    });
    // Four times the cap: a block mined between two of the hold's beats falls by an eighth, still far above it.
    await withBaseFeeHeld(2_000n * GWEI, async () => {
      await payerChain.sendTokenTransfer({
        from: payer,
        token: SANDBOX_TOKEN_ADDRESS,
        to: p.funding.depositAddress.address,
        amountAtomic: USDC(3),
      });
      await eventually(
        async (saw) => {
          const failures = await feeCapFailures(paymentWorkflowId(p.id));
          saw(`${failures} sends stopped by the cap`);
          return failures >= 1;
        },
        `Payment ${p.id}'s settlement stopped by the cap`,
        { mine: false },
      );
      for (let round = 0; round < 4; round += 1) {
        await skipTime(h, FEE_CAP_WAIT_MS + 1_000);
        const { payment: now } = await getPayment(m, p.id);
        assert.equal(now.status, 'accepted', `round ${round}: still accepted`);
        assert.equal(now.operationalState, 'normal', `round ${round}: no try spent, nothing held (${now.operationalReasonCode})`);
      }
      assert.ok((await feeCapFailures(paymentWorkflowId(p.id))) >= 3, 'it asked again after each wait');
      assert.deepEqual(await legsOf({ type: 'payment', id: p.id }), [], 'nothing signed above the cap');
    });
    await skipTime(h, FEE_CAP_WAIT_MS + 1_000);
    const done = await waitForPayment(
      m,
      p.id,
      'succeeded',
      (x) => x.status === 'succeeded' || x.operationalState === 'requires_intervention',
    );
    assert.equal(done.status, 'succeeded');
    assert.deepEqual(await eventNames(p.id), ['payment.created', 'payment.processing', 'payment.accepted', 'payment.succeeded']);
    await assertLedgerBalanced();
  });

  test('the base fee rising from 1 to 150 gwei after the legs were signed: each is replaced at its nonce, paid for by the top-up made when it was signed, and the Payment succeeds', async () => {
    const h = await getHarness();
    const chain = h.chain.chains.get(h.chainId);
    const m = await newMerchant();
    const p = (await createPayment(m, { amount: '10' })).body.payment;
    const escrow = p.funding.depositAddress.address as Address;
    const payer = await newPayer(10_000_000n);
    const source = await replacedUnderRisingBaseFee(
      3,
      async () => {
        await chain.sendTokenTransfer({ from: payer, token: SANDBOX_TOKEN_ADDRESS, to: escrow, amountAtomic: 10_000_000n });
        await mine(2);
        await pokeScanner();
        // The escrow holds no gas: the one top-up for its three legs is mined before any is signed.
        await eventually(
          async (saw) => {
            const pending = await pendingTo(escrow);
            saw(`${pending.length} pending to ${escrow}`);
            return pending.length > 0;
          },
          `the treasury's top-up of ${escrow} in the mempool`,
          { mine: false },
        );
        await mine(1);
        return { type: 'payment', id: p.id };
      },
      150n * GWEI,
    );
    const done = await waitForPayment(m, p.id, 'succeeded', (x) => x.status === 'succeeded');
    assert.equal(done.stage, 'settlement_confirmed');
    assert.equal((await assertMinedExactlyWhenLive(source)).length, 3);
    assert.equal(await tokenBalance(m.wallet), 9_850_000n, 'the payee is paid once');
    assert.deepEqual(await eventNames(p.id), ['payment.created', 'payment.processing', 'payment.accepted', 'payment.succeeded']);
    await assertLedgerBalanced();
  });
});

/**
 * Runs `body` with the base fee held at `baseFeeWei` and a block a second (as on a real chain, so the
 * hold sets each block's fee before it is mined; automine would mine blocks faster than the hold's
 * beat, letting the fee fall under transactions priced a moment earlier). Restores the fee and the
 * mining mode it found, also when `body` fails; answers the base fee it found.
 */
async function withBaseFeeHeld(baseFeeWei: bigint, body: () => Promise<void>): Promise<bigint> {
  const h = await getHarness();
  const faults = createChainFaults(h.rpcUrl);
  const mode = await faults.miningMode();
  await faults.setMiningMode({ mode: 'interval', seconds: 1 });
  let hold: BaseFeeHold | undefined;
  try {
    hold = await faults.holdBaseFee(baseFeeWei);
    // Nothing is priced before a block at the held fee is the latest one.
    await poll(
      async (saw) => {
        const latest = await h.chain.chains.get(h.chainId).getBaseFee();
        saw(`latest base fee ${latest}`);
        return latest * 8n >= baseFeeWei * 7n;
      },
      `a block at the held base fee ${baseFeeWei}`,
      { timeoutMs: 30_000, done: Boolean, between: () => new Promise((r) => setTimeout(r, 100)) },
    );
    await body();
    return hold.baselineWei;
  } finally {
    // The mining mode first: an interval block after the fee is set back would lower it again.
    await faults.setMiningMode(mode);
    await hold?.release();
  }
}

/** How many of the workflow's activity attempts the fee cap stopped, read from its history. */
async function feeCapFailures(workflowId: string): Promise<number> {
  const h = await getHarness();
  const history = await h.env.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).filter(
    (e) =>
      e.activityTaskFailedEventAttributes?.failure?.cause?.applicationFailureInfo?.type === FEE_ABOVE_CAP ||
      e.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.type === FEE_ABOVE_CAP,
  ).length;
}

/** The mempool's transactions to `address`. */
async function pendingTo(address: string): Promise<string[]> {
  type Pool = Record<string, Record<string, { hash: string; to: string | null }>>;
  const content = await rpc<{ pending: Pool; queued: Pool }>('txpool_content');
  return [content.pending, content.queued]
    .flatMap((pool) => Object.values(pool).flatMap((byNonce) => Object.values(byNonce)))
    .filter((tx) => tx.to?.toLowerCase() === address.toLowerCase())
    .map((tx) => tx.hash);
}

/** A receive Payment paid in full by a payer, settled to the merchant. */
async function paymentSettles(m: Merchant): Promise<SettlementSource> {
  const p = (await createPayment(m, { amount: '10' })).body.payment;
  await payTo(await newPayer(USDC(10)), p.funding.depositAddress.address, USDC(10));
  const done = await waitForPayment(m, p.id, 'succeeded', (x) => x.status === 'succeeded' || x.status === 'requires_intervention');
  assert.equal(done.status, 'succeeded', `Payment ${p.id} ended ${done.status} at ${done.stage}`);
  assert.deepEqual(await eventNames(p.id), ['payment.created', 'payment.processing', 'payment.accepted', 'payment.succeeded']);
  return { type: 'payment', id: p.id };
}

/** A deposit to a reusable address, settled to the account's wallet. */
async function depositSettles(): Promise<SettlementSource> {
  const m = await newMerchant();
  const { accountId } = await newAccountWithWallet(m.cred);
  const address = await newDepositAddress(m.cred, accountId);
  await payTo(await newPayer(USDC(20)), address.address, USDC(20));
  const [deposit] = await waitForDeposits(accountId, (d) => d.length === 1 && ['settled', 'requires_intervention'].includes(d[0]!.status), {
    mine: true,
    what: 'the deposit settled (or held)',
  });
  assert.equal(deposit!.status, 'settled', `deposit ${deposit!.id} ended ${deposit!.status} (${deposit!.settlementReasonCode})`);
  const res = await call(`/v2/accounts/${accountId}/deposits/${deposit!.id}`, { credential: m.cred });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.deposit.status, 'settled');
  assert.ok(res.body.deposit.settlement.txHash, 'the settlement names its transaction');
  return { type: 'deposit', id: deposit!.id };
}

/** A refund of part of a succeeded Payment, from the merchant's vault to the payer. */
async function refundConfirms(m: Merchant): Promise<SettlementSource> {
  const vault = (await fundedVault(m, 12)).address;
  const { payment, payer } = await paidPayment(m, 5);
  const before = await tokenBalance(payer.address);
  const res = await post(m, `/v2/payments/${payment.id}/refunds`, { amount: '2' });
  assert.equal(res.status, 201, res.text);
  const refundId = res.body.refund.id as string;
  await waitForReturn(m, payment.id, 'refunds', refundId, 'confirmed');
  assert.equal(await tokenBalance(payer.address), before + USDC(2), 'refunded once');
  assert.equal(await tokenBalance(vault), USDC(10), 'the vault paid the refund once');
  return { type: 'refund', id: refundId };
}

/** A Payment paid from another account's vault: the vault's leg funds the escrow, the Payment succeeds. */
async function vaultFundingConfirms(): Promise<SettlementSource> {
  const h = await getHarness();
  const v = await activeVault(USDC(100).toString());
  await payTo(await newPayer(USDC(20)), v.vault.address, USDC(20));
  const merchant = await newMerchant(v.cred);
  const p = (await createPayment(merchant, { amount: '4' })).body.payment;
  const { fundingOperation } = await authorizeVaultFunding(
    { prisma: h.db.prisma, chains: h.chain.chains },
    { paymentId: p.id, payerAccountId: v.accountId, actor: { type: 'client', id: null } },
  );
  assert.equal(await h.engine.startVaultFunding(fundingOperation.id, 2), 'started');
  await eventually(async (saw) => {
    const row = await h.db.prisma.vaultFundingOperation.findUniqueOrThrow({ where: { id: fundingOperation.id } });
    saw(row.status);
    assert.notEqual(row.status, 'failed', `vault funding ${row.id} failed: ${row.failureReason}`);
    return row.status === 'confirmed';
  }, `vault funding ${fundingOperation.id} confirmed`);
  await waitForPayment(merchant, p.id, 'succeeded', (x) => x.status === 'succeeded');
  assert.equal(await tokenBalance(v.vault.address), USDC(16), 'the vault paid once');
  return { type: 'vault_funding', id: fundingOperation.id };
}

/** Every leg of the settlement was signed while the fee was held (it offers the held base fee), and only the live ones are mined. */
async function assertLegsPaidTheHeldFee(source: SettlementSource, baseFeeWei: bigint): Promise<void> {
  const legs = await legsOf(source);
  assert.ok(legs.length > 0, `${source.type} ${source.id} sent legs`);
  for (const leg of legs) {
    const tx = parseTransaction(leg.serialized as Hex);
    assert.ok(
      tx.maxFeePerGas! >= baseFeeWei,
      `${source.type} ${leg.leg} offers ${tx.maxFeePerGas} per gas, at least the held ${baseFeeWei}`,
    );
  }
  await assertMinedExactlyWhenLive(source);
}
