import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newApp } from '../support/api-client';
import { blockByBlock, eventually, sendOnHeldChain } from '../support/chain';
import { getHarness } from '../support/harness';
import { endsWithBooksChecked } from '../support/books';
import { createPayment, getPayment, newMerchant, newAccountWithWallet, newDepositAddress } from '../support/fixtures';
import { USDC, newPayer, send } from '../deposits/helpers';
import type { PrivateKeyAccount } from 'viem';

/** An hour between confirmation reads: within a test, only the scanner's block signals can move a workflow on. */
const HOURLY = { confirmationPollSeconds: 3600, maxPollSeconds: 3600 };

/** What drove a workflow: its chain reads (by activity), the chainAdvanced signals it got, the timers that fired, its clock. */
async function drivers(workflowId: string) {
  const h = await getHarness();
  const events = (await h.probes.workflowHistory(workflowId)).events ?? [];
  const scheduled = (name: string) => events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === name);
  const activities = (name: string) => scheduled(name).length;
  // Read, not just asked for: a read scheduled before a block and run after it sees that block.
  const completed = (name: string) => {
    const ids = new Set(scheduled(name).map((e) => String(e.eventId)));
    return events.filter((e) => ids.has(String(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? ''))).length;
  };
  const seconds = (i: number) => Number(events[i]!.eventTime?.seconds ?? 0);
  return {
    activities,
    completed,
    signals: events.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'chainAdvanced').length,
    timersFired: events.filter((e) => e.timerFiredEventAttributes).length,
    clockSeconds: seconds(events.length - 1) - seconds(0),
  };
}

/**
 * With an hourly poll the workflow would still be waiting: it read the chain again (at least `reads`
 * times per activity) on block signals alone, and its hourly timer never fired (its clock did not
 * skip the hour).
 */
async function assertWokenByBlocks(workflowId: string, reads: Record<string, number>) {
  const d = await drivers(workflowId);
  for (const [activity, atLeast] of Object.entries(reads))
    assert.ok(d.activities(activity) >= atLeast, `${activity}: ${JSON.stringify(d)}`);
  assert.ok(d.signals >= 1, JSON.stringify(d));
  assert.equal(d.timersFired, 0);
  assert.ok(d.clockSeconds < 3600, JSON.stringify(d));
}

/** Until `read` answers (the workflow has read the chain once), with no block mined meanwhile. */
async function firstReadBeforeAnyBlock<T>(read: () => Promise<T | undefined>): Promise<T> {
  return eventually(read, 'the first chain read', { mine: false }).catch(async (err: Error) => {
    throw new Error(`${err.message}; the scanner: ${JSON.stringify(await scannerState())}`);
  });
}

/** What a failure needs to say about the scanner: its run, what it is doing, how far it read. */
async function scannerState() {
  const h = await getHarness();
  const d = await h.env.client.workflow.getHandle(`chain-scanner:${h.chainId}`).describe();
  const activities = (d.raw.pendingActivities ?? []).map((a) => ({
    type: a.activityType?.name,
    attempt: a.attempt,
    state: a.state,
    failure: a.lastFailure?.message,
  }));
  const events = (await h.probes.workflowHistory(`chain-scanner:${h.chainId}`)).events ?? [];
  const tail = events.slice(-15).map((e) => {
    const attrs = Object.entries(e).filter(([k, v]) => k.endsWith('Attributes') && v);
    return `${e.eventId} ${attrs.map(([k, v]) => `${k.replace('EventAttributes', '')} ${JSON.stringify(v).slice(0, 160)}`).join(' ')}`;
  });
  return {
    runId: d.runId,
    status: d.status.name,
    historyLength: d.historyLength,
    activities,
    head: String(await h.chain.chains.get(h.chainId).getBlockNumber()),
    tail,
  };
}

/**
 * The transfer mined on a held chain: no other block comes (a settlement left by an earlier test
 * included) until release, so the workflow's first read finds the transfer short of its depth.
 */
function sendHeld(payer: PrivateKeyAccount, to: string, amountAtomic: bigint) {
  const fromPayer = (tx: { from: string }) => tx.from.toLowerCase() === payer.address.toLowerCase();
  return sendOnHeldChain(() => send(payer, to, amountAtomic), fromPayer, 'the transfer mined');
}

describe('Confirmations wait on blocks, not timers (the scanner signals every workflow with something in flight)', () => {
  endsWithBooksChecked();

  test('a Payment polling hourly re-verifies its confirming transfer and its settlement on each block signal and succeeds; no timer fired', async () => {
    const h = await getHarness();
    h.policies.payment = HOURLY;
    try {
      const m = await newMerchant();
      const p = (await createPayment(m, { amount: '3' })).body.payment;
      const payer = await newPayer(3n * USDC);
      const held = await sendHeld(payer, p.funding.depositAddress.address, 3n * USDC);
      try {
        await firstReadBeforeAnyBlock(async () => ((await drivers(p.id)).completed('verifyPaymentTransfers') >= 1 ? true : undefined));
        await blockByBlock(
          async () => ((await getPayment(m, p.id)).payment.status === 'succeeded' ? true : undefined),
          'the Payment succeeded',
        );
      } finally {
        await held.release();
      }
      await assertWokenByBlocks(p.id, { verifyPaymentTransfers: 2, checkSettlement: 1 });
    } finally {
      delete h.policies.payment;
    }
  });

  test('a deposit polling hourly confirms its source and its settlement on block signals and settles; no timer fired', async () => {
    const h = await getHarness();
    h.policies.deposit = HOURLY;
    try {
      const cred = await newApp();
      const { accountId } = await newAccountWithWallet(cred);
      const address = await newDepositAddress(cred, accountId);
      const payer = await newPayer(20n * USDC);
      // No block is mined until the workflow has read its source once (short of the depth, so it
      // must wait): on a busy suite blocks mined meanwhile would let it settle without ever waiting.
      const held = await sendHeld(payer, address.address, 20n * USDC);
      let workflowId: string;
      try {
        workflowId = await firstReadBeforeAnyBlock(async () => {
          const row = await h.db.prisma.deposit.findFirst({ where: { accountId } });
          return row && (await drivers(row.workflowId)).completed('verifyDepositSource') >= 1 ? row.workflowId : undefined;
        });
        const settled = await blockByBlock(
          () => h.db.prisma.deposit.findFirst({ where: { accountId, status: 'settled' } }).then((d) => d ?? undefined),
          'the deposit settled',
        );
        assert.equal(settled.workflowId, workflowId);
      } finally {
        await held.release();
      }
      await assertWokenByBlocks(workflowId, { verifyDepositSource: 2, checkDepositSettlement: 1 });
    } finally {
      delete h.policies.deposit;
    }
  });
});
