import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newApp } from '../support/api-client';
import { getHarness } from '../support/harness';
import { terminateAtRest } from '../support/engine-clock';
import { awaitWorkflowResult, skipTime } from '../support/workflow-result';
import { endsWithBooksChecked } from '../support/books';
import { defaultPayloadConverter } from '@temporalio/common';
import { DEPOSIT_WORKFLOW } from '../../workflows/contracts/deposit';
import { setNativeBalance } from '../support/chain';
import { depositHold, listHolds } from '../../src/domain/operators/operator-holds';
import { detailPage } from '../../src/http/console/console-views';
import { renderHtml } from '../../src/http/html';
import { nominateForRecording } from '../support/record-histories';
import { poll } from '../support/until';
import { cli, mine, newPayer, pokeScanner, send, TOKEN, USDC, waitForDeposits } from './helpers';
import { newAccountWithWallet, newDepositAddress } from '../support/fixtures';

/** Sends a deposit's funds away from its address: funds the books never took leave the chain and the books agreeing. */
async function sendAway(depositAddressId: string, amountAtomic: bigint): Promise<void> {
  const h = await getHarness();
  const row = await h.db.prisma.depositAddress.findUniqueOrThrow({ where: { id: depositAddressId } });
  await setNativeBalance(row.address!, 10n ** 18n);
  const chain = h.chain.chains.get(h.chainId);
  const away = await chain.sendTokenTransfer({
    from: h.chain.custody.signer({ purpose: 'deposit', index: row.custodyIndex }),
    token: TOKEN,
    to: (await newPayer(0n)).address,
    amountAtomic,
  });
  while ((await chain.getTransactionStatus(away, 1)) !== 'confirmed') await mine(1);
}

describe('Deposits held for a data error', () => {
  endsWithBooksChecked();

  test('after the held run is gone and a new run takes the deposit over, retry resumes it to settled and fail ends it', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const { accountId } = await newAccountWithWallet(cred);
    const [toRetry, toFail] = [await newDepositAddress(cred, accountId), await newDepositAddress(cred, accountId)];
    const payer = await newPayer(30n * USDC);
    // The move to confirming breaks a constraint (SQLSTATE 23514) for these two deposit addresses only.
    const constraint = `test_refuses_${toRetry.id}`.toLowerCase();
    await h.db.prisma.$executeRawUnsafe(
      `ALTER TABLE deposits ADD CONSTRAINT "${constraint}" CHECK (deposit_address_id NOT IN ('${toRetry.id}', '${toFail.id}') OR status <> 'confirming') NOT VALID`,
    );
    let held;
    try {
      await send(payer, toRetry.address, 10n * USDC);
      await send(payer, toFail.address, 20n * USDC);
      held = await waitForDeposits(accountId, (d) => d.length === 2 && d.every((x) => x.status === 'requires_intervention'), {
        what: 'both held for the refused write',
      });
    } finally {
      await h.db.prisma.$executeRawUnsafe(`ALTER TABLE deposits DROP CONSTRAINT "${constraint}"`);
    }
    for (const d of held) assert.equal(d.settlementReasonCode, 'data_error');

    // The runs that held them end (as a run lost to a failure would), and each deposit's workflow is
    // started again with its input, as a rerun after a failed run is: the new run knows the deposit
    // only from the database.
    for (const d of held) {
      const handle = h.env.client.workflow.getHandle(d.workflowId);
      const started = (await handle.fetchHistory()).events![0]!.workflowExecutionStartedEventAttributes!;
      const input = defaultPayloadConverter.fromPayload(started.input!.payloads![0]!);
      await terminateAtRest(h.env, d.workflowId, 'test: the run that saw the hold is gone');
      await h.env.client.workflow.start(DEPOSIT_WORKFLOW, {
        taskQueue: h.taskQueue,
        workflowId: d.workflowId,
        args: [input],
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      });
    }

    const byAmount = (atomic: bigint) => held.find((d) => BigInt(d.amountAtomic.toString()) === atomic)!;
    await cli([
      'deposits',
      'resolve',
      byAmount(10n * USDC).id,
      '--action',
      'retry',
      '--actor',
      'ops:bob',
      '--reason',
      'constraint dropped',
    ]);
    await cli(['deposits', 'resolve', byAmount(20n * USDC).id, '--action', 'fail', '--actor', 'ops:bob', '--reason', 'not ours']);
    const done = await waitForDeposits(
      accountId,
      (d) => d.every((x) => x.status === 'settled' || x.status === 'failed') && d.some((x) => x.status === 'settled'),
      {
        mine: true,
        what: 'one settled after the retry, one failed',
      },
    );
    const settled = done.find((d) => d.id === byAmount(10n * USDC).id)!;
    const failed = done.find((d) => d.id === byAmount(20n * USDC).id)!;
    assert.equal(settled.status, 'settled');
    assert.equal(failed.status, 'failed');
    assert.equal(failed.failureReason, 'not ours');
    // The failed one was never settling: no receipt was posted, so none is reversed.
    const postings = await h.db.prisma.ledgerPosting.findMany({ where: { sourceType: 'deposit', sourceId: failed.id } });
    assert.deepEqual(postings, []);
    // The failed deposit's funds were never the books' (no receipt): sent away, so the books and the chain agree for later files.
    await sendAway(toFail.id, 20n * USDC);
    const resolutions = await h.db.prisma.depositResolution.findMany({
      where: { depositId: { in: [settled.id, failed.id] } },
      orderBy: { action: 'asc' },
    });
    assert.deepEqual(
      resolutions.map((r) => [r.depositId, r.action, r.actor]),
      [
        [failed.id, 'fail', 'ops:bob'],
        [settled.id, 'retry', 'ops:bob'],
      ],
    );
  });

  test('a deposit whose first write (its row) is refused is held as an open deposit_unrecorded alert: listed with the holds, mark-settled refused, retry records and settles it, fail closes it', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const { accountId } = await newAccountWithWallet(cred);
    const address = await newDepositAddress(cred, accountId);
    const payer = await newPayer(30n * USDC);
    // The deposit row itself breaks a constraint (SQLSTATE 23514) for this deposit address only.
    const constraint = `test_refuses_row_${address.id}`.toLowerCase();
    await h.db.prisma.$executeRawUnsafe(
      `ALTER TABLE deposits ADD CONSTRAINT "${constraint}" CHECK (deposit_address_id <> '${address.id}') NOT VALID`,
    );
    type Alert = {
      id: string;
      severity: string;
      details: { depositId: string; workflowId: string; sqlState: string; start: { depositAddressId: string; amountAtomic: string } };
    };
    let alerts: Alert[];
    try {
      await send(payer, address.address, 10n * USDC);
      await send(payer, address.address, 20n * USDC);
      alerts = await poll(
        async (saw) => {
          const listed = (await cli(['alerts', 'list', '--open', '--kind', 'deposit_unrecorded'])) as { items: Alert[] };
          const mine = listed.items.filter((a) => a.details.start.depositAddressId === address.id);
          saw(mine.map((a) => a.details.depositId));
          return mine.length === 2 ? mine : undefined;
        },
        'an open deposit_unrecorded alert for each refused row',
        {
          timeoutMs: 60_000,
          async between() {
            await pokeScanner();
            await skipTime(h, 1000);
          },
        },
      );
    } finally {
      await h.db.prisma.$executeRawUnsafe(`ALTER TABLE deposits DROP CONSTRAINT "${constraint}"`);
    }
    const alertOf = (atomic: bigint) => alerts.find((a) => a.details.start.amountAtomic === atomic.toString())!;
    const [toRetry, toFail] = [alertOf(10n * USDC), alertOf(20n * USDC)];
    for (const a of alerts) assert.deepEqual([a.severity, a.details.sqlState], ['critical', '23514']);
    const [retryId, failId] = [toRetry.details.depositId, toFail.details.depositId];
    assert.equal(await h.db.prisma.deposit.count({ where: { id: { in: [retryId, failId] } } }), 0, 'no row: the alert is the record');

    // The console lists them with the holds, and shows each one's page with the release forms.
    const { items } = await listHolds(h.db.prisma);
    for (const id of [retryId, failId]) {
      const item = items.find((i) => i.kind === 'deposit' && i.id === id);
      assert.deepEqual([item?.state, item?.status, item?.reasonCode], ['requires_intervention', 'unrecorded', 'data_error']);
    }
    const page = await depositHold(h.db.prisma, failId);
    assert.deepEqual([page.item.state, page.item.amount, page.workflowId], ['requires_intervention', '20 USDC', toFail.details.workflowId]);
    // Its forms speak of the write, and offer no mark-settled (nothing is recorded to settle).
    const rendered = renderHtml(detailPage(page, { tx: () => '#', workflow: () => null }, 'csrf', {}));
    assert.match(rendered, /Retry the write/);
    assert.doesNotMatch(rendered, /value="mark-settled"|Retry settlement/);

    // Nothing is recorded to settle: mark-settled is refused when it is asked for, with the reason, and
    // no request is left waiting for a second operator.
    const markSettled = await cli([
      'deposits',
      'resolve',
      retryId,
      '--action',
      'mark-settled',
      '--tx',
      `0x${'ab'.repeat(32)}`,
      '--reason',
      'paid by hand',
      '--actor',
      'ops:bob',
    ]).catch((err: { code?: number; stderr?: string }) => err);
    assert.equal((markSettled as { code?: number }).code, 1);
    assert.match((markSettled as { stderr: string }).stderr, /not recorded/);
    assert.equal(await h.db.prisma.operatorApproval.count({ where: { targetId: retryId } }), 0);
    await cli(['deposits', 'resolve', retryId, '--action', 'retry', '--actor', 'ops:bob', '--reason', 'constraint dropped']);
    await cli(['deposits', 'resolve', failId, '--action', 'fail', '--actor', 'ops:bob', '--reason', 'not ours']);

    const [settled] = await waitForDeposits(accountId, (d) => d.length === 1 && d[0]!.status === 'settled', {
      mine: true,
      what: 'the retried deposit recorded and settled',
    });
    assert.equal(settled!.id, retryId);
    // The failed one's run ends (completed: a rescan can't start it again) and closes its alert.
    const failWorkflow = h.env.client.workflow.getHandle(toFail.details.workflowId);
    assert.deepEqual(await awaitWorkflowResult(h, toFail.details.workflowId), { status: 'failed', statusVersion: 0 });
    nominateForRecording('deposit--unrecorded-failed', toFail.details.workflowId, (await failWorkflow.describe()).runId);
    const closed = await h.db.prisma.operatorAlert.findMany({ where: { id: { in: alerts.map((a) => a.id) } } });
    assert.ok(
      closed.every((a) => a.resolvedAt !== null),
      'both alerts resolved',
    );
    assert.deepEqual((closed.find((a) => a.id === toFail.id)!.details as { resolution: unknown }).resolution, {
      action: 'fail',
      actor: 'ops:bob',
      reason: 'not ours',
    });
    assert.equal(await h.db.prisma.deposit.count({ where: { id: failId } }), 0);
    const audit = await h.db.prisma.operatorAction.findMany({
      where: { targetType: 'deposit', targetId: { in: [retryId, failId] } },
      orderBy: { createdAt: 'asc' },
    });
    assert.deepEqual(
      audit.map((a) => [a.targetId, a.action, a.outcome]),
      [
        [retryId, 'mark-settled', 'refused'],
        [retryId, 'retry', 'signalled'],
        [failId, 'fail', 'signalled'],
      ],
    );
    await sendAway(address.id, 20n * USDC);
  });
});
