import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { getHarness } from '../support/harness';
import { newApp } from '../support/api-client';
import { paysInToken, sendOnHeldChain } from '../support/chain';
import { assertLedgerBalanced, newAccountWithWallet, newDepositAddress } from '../support/fixtures';
import { endsWithBooksChecked } from '../support/books';
import {
  USDC,
  blockNumber,
  depositEvents,
  newPayer,
  pokeScanner,
  restartScannerFrom,
  send,
  tokenBalance,
  waitForDeposits,
} from './helpers';

/**
 * The one deposit test that restarts the shared worker, in a file of its own: its process runs a
 * worker without a workflow cache (test/support/test-files.ts), which costs every other deposit test
 * a full replay per workflow task.
 */
describe('Deposits across a worker restart', () => {
  endsWithBooksChecked();

  test('makes one deposit per transfer when the scanner is restarted mid-range and rescans it, running or finished', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const { accountId } = await newAccountWithWallet(cred);
    const address = await newDepositAddress(cred, accountId);
    const payer = await newPayer(30n * USDC);
    const before = await blockNumber();

    // Held one block deep, so the first deposit's workflow is still running when the worker restarts.
    const held = await sendOnHeldChain(
      () => send(payer, address.address, 10n * USDC),
      (tx) => paysInToken(tx, address.address),
      'the first transfer mined, alone',
    );
    const tx1 = held.result;
    let firstWorkflowId: string;
    let runId: string;
    try {
      await pokeScanner();
      const [first] = await waitForDeposits(accountId, (d) => d.length === 1 && d[0]!.status === 'confirming', { what: 'first detected' });
      firstWorkflowId = first!.workflowId;
      runId = (await h.engine.describeWorkflow(firstWorkflowId)).runId;
      // This process's worker caches nothing, so its workflows get longer tasks (test/support/harness.ts).
      const config = (await h.env.client.workflow.getHandle(firstWorkflowId).describe()).raw.executionConfig;
      assert.equal(Number(config?.defaultWorkflowTaskTimeout?.seconds), 30, 'a task may take 30 s');
    } finally {
      await held.release();
    }

    // While the first deposit's workflow runs: the worker restarts and the scanner re-reads the range.
    await h.restartWorker();
    await restartScannerFrom(before);
    const tx2 = await send(payer, address.address, 11n * USDC);
    await pokeScanner();
    // The scanner reads in block order: once the second transfer is seen, the first was rescanned.
    let rows = await waitForDeposits(accountId, (d) => d.length === 2 && d.every((x) => x.status === 'settled'), {
      mine: true,
      what: 'both settled',
    });
    assert.deepEqual(rows.map((r) => r.txHash).sort(), [tx1.toLowerCase(), tx2.toLowerCase()].sort());

    // Both workflows have finished; a rescan from before both still starts nothing new.
    await restartScannerFrom(before);
    await send(payer, address.address, 9n * USDC);
    await pokeScanner();
    rows = await waitForDeposits(accountId, (d) => d.length === 3 && d.every((x) => x.status === 'settled'), {
      mine: true,
      what: 'third settled',
    });
    assert.equal(rows.length, 3);
    const described = await h.engine.describeWorkflow(firstWorkflowId);
    assert.equal(described.runId, runId);
    assert.equal(described.status, 'COMPLETED');
    for (const d of rows) {
      assert.deepEqual(
        (await depositEvents(d.id)).map((e) => e.name),
        ['deposit.detected', 'deposit.settled'],
      );
    }
    const settledLegs = await h.db.prisma.ledgerPosting.count({
      where: { sourceType: 'deposit', sourceId: { in: rows.map((r) => r.id) }, leg: 'settlement' },
    });
    assert.equal(settledLegs, 3);
    assert.equal(await tokenBalance(address.address), 0n);
    await assertLedgerBalanced();
  });
});
