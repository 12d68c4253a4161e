import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newApp } from '../support/api-client';
import { blockByBlock, pokeScanner } from '../support/chain';
import { getHarness } from '../support/harness';
import { endsWithBooksChecked } from '../support/books';
import { createPayment, getPayment, newAccountWithWallet, newDepositAddress, newMerchant } from '../support/fixtures';
import { USDC, newPayer, send } from '../deposits/helpers';
import { LOCAL_ACTIVITY_MARKER } from '../../bench/engine-work';
import { SHORT_STEPS_LOCAL } from '../../workflows/short-steps';
import { nominateForRecording } from '../support/record-histories';
import { chainAdvancedSignal } from '../../workflows/contracts/chain-advanced';
import { poll } from '../support/until';

/** What a run's history shows of its work: activity tasks by type, local activities, the short-steps patch. */
async function work(workflowId: string) {
  const h = await getHarness();
  const events = (await h.probes.workflowHistory(workflowId)).events ?? [];
  const markers = events.map((e) => e.markerRecordedEventAttributes).filter((m) => m);
  return {
    activityTasks: events.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter((n) => n),
    // Each local activity's marker names its type (sdk-core's LocalActivityMarkerData, as JSON).
    localActivities: [
      ...new Set(
        markers
          .filter((m) => m!.markerName === LOCAL_ACTIVITY_MARKER)
          .map(
            (m) =>
              (JSON.parse(Buffer.from(m!.details?.data?.payloads?.[0]?.data ?? []).toString('utf8')) as { activity_type: string })
                .activity_type,
          ),
      ),
    ].sort(),
    patched: markers.some(
      (m) =>
        m!.markerName === 'core_patch' &&
        Buffer.from(m!.details?.['patch-data']?.payloads?.[0]?.data ?? [])
          .toString('utf8')
          .includes(SHORT_STEPS_LOCAL),
    ),
    completed: events.some((e) => e.workflowExecutionCompletedEventAttributes),
  };
}

const runId = async (workflowId: string) => (await (await getHarness()).engine.describeWorkflow(workflowId)).runId;

/** As the service runs them: the short steps local (the harness otherwise keeps them activity tasks). */
async function withLocalShortSteps(fn: () => Promise<void>): Promise<void> {
  const h = await getHarness();
  h.policies.shortSteps = { local: true };
  try {
    await fn();
  } finally {
    h.policies.shortSteps = { local: false };
  }
}

describe('Short steps run as local activities (the engine schedules only the sends)', () => {
  endsWithBooksChecked();

  test('a receive Payment succeeds with one activity task, its settlement broadcast; every transition, read and check runs locally', async () => {
    await withLocalShortSteps(async () => {
      const m = await newMerchant();
      const p = (await createPayment(m, { amount: '3' })).body.payment;
      await send(await newPayer(3n * USDC), p.funding.depositAddress.address, 3n * USDC);
      await pokeScanner();
      const paid = await blockByBlock(
        async () => {
          const { payment } = await getPayment(m, p.id);
          return payment.status === 'succeeded' && (await work(p.id)).completed ? payment : undefined;
        },
        `Payment ${p.id} succeeded and its run ended`,
        120,
      );
      assert.equal(paid.paymentAmount.amount, '3');
      const w = await work(p.id);
      assert.deepEqual(w.activityTasks, ['broadcastSettlement']);
      // Recorded apart from the harness's runs (whose short steps are activity tasks): replay covers both.
      nominateForRecording('payment--receive-succeeded-local-steps', p.id, await runId(p.id));
      assert.equal(w.patched, true);
      assert.deepEqual(w.localActivities, ['checkSettlement', 'persistPaymentTransition', 'settlementTxHash', 'verifyPaymentTransfers']);
    });
  });

  test('a deposit settles with one activity task, its settlement broadcast; recording, reads and checks run locally', async () => {
    await withLocalShortSteps(async () => {
      const h = await getHarness();
      const cred = await newApp();
      const { accountId } = await newAccountWithWallet(cred);
      const address = await newDepositAddress(cred, accountId);
      await send(await newPayer(20n * USDC), address.address, 20n * USDC);
      await pokeScanner();
      const settled = await blockByBlock(
        async () => {
          const row = await h.db.prisma.deposit.findFirst({ where: { accountId, status: 'settled' } });
          return row && (await work(row.workflowId)).completed ? row : undefined;
        },
        `the deposit to ${address.address} settled and its run ended`,
        120,
      );
      const w = await work(settled.workflowId);
      assert.deepEqual(w.activityTasks, ['broadcastDepositSettlement']);
      nominateForRecording('deposit--settled-local-steps', settled.workflowId, await runId(settled.workflowId));
      assert.equal(w.patched, true);
      assert.deepEqual(w.localActivities, [
        'checkDepositSettlement',
        'depositSettlementTxHash',
        'persistDepositTransition',
        'recordDepositDetected',
        'verifyDepositSource',
      ]);
    });
  });

  test('a step that keeps the status, run again after the engine refused its task, writes its event once', async () => {
    await withLocalShortSteps(async () => {
      const h = await getHarness();
      const m = await newMerchant();
      const p = (await createPayment(m, { amount: '3' })).body.payment;
      const escrow = p.funding.depositAddress.address;
      const payer = await newPayer(6n * USDC);
      await send(payer, escrow, 3n * USDC);
      await pokeScanner();
      await blockByBlock(
        async () => ((await getPayment(m, p.id)).payment.status === 'succeeded' && (await work(p.id)).completed) || undefined,
        `Payment ${p.id} succeeded and its run ended`,
        120,
      );
      await send(payer, escrow, 3n * USDC);
      await pokeScanner();
      await poll(
        async (saw) => {
          const rows = await h.db.prisma.paymentTransfer.findMany({ where: { paymentId: p.id, role: 'duplicate' } });
          saw(`duplicate transfers ${JSON.stringify(rows.map((r) => r.status))}`);
          return rows.some((r) => r.status === 'pending') && (await work(p.id)).completed === false;
        },
        `the second transfer to ${p.id} tracked by a new run`,
        { timeoutMs: 60_000, done: Boolean, between: async () => (await pokeScanner(), new Promise((r) => setTimeout(r, 500))) },
      );

      // The row held, the step that confirms the duplicate waits in its write; a signal meanwhile makes
      // the engine refuse the task that would end the run, so the next task runs the step again.
      await h.db.prisma.$transaction(
        async (tx) => {
          await tx.$queryRaw`SELECT id FROM payments WHERE id = ${p.id} FOR UPDATE`;
          await blockByBlock(
            async () => {
              const [row] = await h.db.prisma.$queryRaw<Array<{ waiting: bigint }>>`
                SELECT count(*) AS waiting FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                WHERE NOT l.granted AND a.datname = current_database()`;
              return row!.waiting > 0n || undefined;
            },
            `the write confirming the duplicate to ${p.id} waiting on the held row`,
            60,
          );
          await h.env.client.workflow
            .getHandle(p.id)
            .signal(chainAdvancedSignal, String(await h.chain.chains.get(h.chainId).getBlockNumber()));
        },
        { timeout: 120_000, maxWait: 10_000 },
      );

      await blockByBlock(
        async () => (await work(p.id)).completed || undefined,
        `the run that confirmed the duplicate to ${p.id} ended`,
        60,
      );
      const history = (await h.probes.workflowHistory(p.id)).events ?? [];
      assert.ok(
        history.some((e) => e.workflowTaskFailedEventAttributes || e.workflowTaskTimedOutEventAttributes),
        'the engine refused the task that ran the step, so the step ran again',
      );
      const duplicates = await h.db.prisma.event.findMany({ where: { resourceId: p.id, name: 'payment.duplicate_received' } });
      assert.equal(duplicates.length, 1, `payment.duplicate_received written ${duplicates.length} times`);
      assert.equal(await h.db.prisma.paymentIncident.count({ where: { paymentId: p.id, kind: 'duplicate' } }), 1);
      assert.equal((await getPayment(m, p.id)).payment.incidentRecoverySummary.count, 1);
    });
  });
});
