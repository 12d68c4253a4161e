import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newApp } from '../support/api-client';
import { getHarness } from '../support/harness';
import { endsWithBooksChecked } from '../support/books';
import { defaultPayloadConverter } from '@temporalio/common';
import { DEPOSIT_WORKFLOW } from '../../workflows/contracts/deposit';
import { setNativeBalance } from '../support/chain';
import { accountWithDestination, cli, createDepositAddress, mine, newPayer, send, TOKEN, USDC, waitForDeposits } from './helpers';

describe('Deposits held for a data error', () => {
  endsWithBooksChecked();

  test('after the held run is gone and a new run takes the deposit over, retry resumes it to settled and fail ends it', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const { accountId } = await accountWithDestination(cred);
    const [toRetry, toFail] = [await createDepositAddress(cred, accountId), await createDepositAddress(cred, accountId)];
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
      held = await waitForDeposits(accountId, (d) => d.length === 2 && d.every((x) => x.status === 'requires_intervention'), { what: 'both held for the refused write' });
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
      await handle.terminate('test: the run that saw the hold is gone');
      await h.env.client.workflow.start(DEPOSIT_WORKFLOW, { taskQueue: h.taskQueue, workflowId: d.workflowId, args: [input], workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY' });
    }

    const byAmount = (atomic: bigint) => held.find((d) => BigInt(d.amountAtomic.toString()) === atomic)!;
    await cli(['deposits', 'resolve', byAmount(10n * USDC).id, '--action', 'retry', '--actor', 'ops:bob', '--reason', 'constraint dropped']);
    await cli(['deposits', 'resolve', byAmount(20n * USDC).id, '--action', 'fail', '--actor', 'ops:bob', '--reason', 'not ours']);
    const done = await waitForDeposits(accountId, (d) => d.every((x) => x.status === 'settled' || x.status === 'failed') && d.some((x) => x.status === 'settled'), {
      mine: true,
      what: 'one settled after the retry, one failed',
    });
    const settled = done.find((d) => d.id === byAmount(10n * USDC).id)!;
    const failed = done.find((d) => d.id === byAmount(20n * USDC).id)!;
    assert.equal(settled.status, 'settled');
    assert.equal(failed.status, 'failed');
    assert.equal(failed.failureReason, 'not ours');
    // The failed one was never settling: no receipt was posted, so none is reversed.
    const postings = await h.db.prisma.ledgerPosting.findMany({ where: { sourceType: 'deposit', sourceId: failed.id } });
    assert.deepEqual(postings, []);
    // The failed deposit's funds were never the books' (no receipt): sent away, so the books and the chain agree for later files.
    const row = await h.db.prisma.depositAddress.findUniqueOrThrow({ where: { id: toFail.id } });
    await setNativeBalance(row.address!, 10n ** 18n);
    const chain = h.chain.chains.get(h.chainId);
    const away = await chain.sendTokenTransfer({ from: h.chain.custody.signer({ purpose: 'deposit', index: row.custodyIndex }), token: TOKEN, to: (await newPayer(0n)).address, amountAtomic: 20n * USDC });
    while ((await chain.getTransactionStatus(away, 1)) !== 'confirmed') await mine(1);
    const resolutions = await h.db.prisma.depositResolution.findMany({ where: { depositId: { in: [settled.id, failed.id] } }, orderBy: { action: 'asc' } });
    assert.deepEqual(resolutions.map((r) => [r.depositId, r.action, r.actor]), [[failed.id, 'fail', 'ops:bob'], [settled.id, 'retry', 'ops:bob']]);
  });
});
