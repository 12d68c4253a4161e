import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from '@temporalio/worker';
import { checkLedger } from '../../src/domain/ledger/check';
import { ZDeposit } from '../../src/domain/deposits/deposit.schemas';
import { call, newApp } from '../support/api-client';
import { getHarness } from '../support/harness';
import { paysInToken, sendOnHeldChain } from '../support/chain';
import {
  TOKEN,
  USDC,
  cli,
  depositEvents,
  mine,
  newPayer,
  pokeScanner,
  rpc,
  send,
  statuses,
  tokenBalance,
  waitForDeposits,
} from './helpers';
import { endsWithBooksChecked } from '../support/books';
import { depositReconciliationWorkflowId } from '../../workflows/contracts/deposit-reconciliation';
import { awaitWorkflowResult } from '../support/workflow-result';
import { resolveDeposit } from '../../src/domain/deposits/deposits';
import { chainWaiters } from '../../src/domain/chain/chain-waiters';
import { newAccountWithWallet, newDepositAddress } from '../support/fixtures';
import { createTestOperator } from '../support/operators';
import { approvalRefusedByCli, approveByCli, markSettledArgs, requestByCli, resolutionSignals } from '../support/approvals';

const DEPOSIT_KEYS = [
  'accountId',
  'amount',
  'depositAddressId',
  'fees',
  'finality',
  'id',
  'settlement',
  'settlementProfileSnapshot',
  'sourceTransfer',
  'status',
  'txHash',
];
const ASSET = { chainId: 31337, tokenAddress: '0xf1108D9fDF3d265B59Bf6Ce7Bf240f99c071ffF5', symbol: 'USDC', decimals: 6, kind: 'token' };

async function ledgerIsBalanced() {
  const h = await getHarness();
  const result = await checkLedger(h.db.prisma);
  assert.deepEqual(result.problems, []);
  assert.equal(result.ok, true);
}

async function entriesOf(depositId: string) {
  const h = await getHarness();
  const postings = await h.db.prisma.ledgerPosting.findMany({
    where: { sourceType: 'deposit', sourceId: depositId },
    include: { entries: { orderBy: { line: 'asc' } }, transactions: true },
    orderBy: { createdAt: 'asc' },
  });
  return Object.fromEntries(
    postings.map((p) => [
      p.leg,
      { entries: p.entries.map((e) => [e.book, e.amountAtomic.toString(), e.accountId]), transactions: p.transactions },
    ]),
  );
}

/** Told of a block only while it can use one: a settling deposit once a leg is broadcast (rolled back after). */
async function settlingWaitsOnBlocksOnlyWithALegBroadcast(deposit: { id: string; workflowId: string }): Promise<void> {
  const h = await getHarness();
  const waitsOnBlocks = (tx: unknown) =>
    chainWaiters(tx as typeof h.db.prisma, h.chainId).then((ws) =>
      ws.some((w) => 'depositWorkflowId' in w && w.depositWorkflowId === deposit.workflowId),
    );
  const seen: boolean[] = [];
  await h.db.prisma
    .$transaction(async (tx) => {
      seen.push(await waitsOnBlocks(tx));
      await tx.deposit.update({ where: { id: deposit.id }, data: { status: 'settling' } });
      seen.push(await waitsOnBlocks(tx));
      const { count } = await tx.settlementLeg.updateMany({
        where: { sourceType: 'deposit', sourceId: deposit.id, leg: 'net' },
        data: { status: 'broadcast' },
      });
      assert.equal(count, 1, 'the deposit has one net leg');
      seen.push(await waitsOnBlocks(tx));
      throw new RolledBack();
    })
    .catch((err: unknown) => {
      if (!(err instanceof RolledBack)) throw err;
    });
  assert.deepEqual(seen, [false, false, true], 'settled; settling with its legs confirmed; settling with its net leg broadcast');
}

class RolledBack extends Error {}

describe('Deposits (DepositWorkflow end to end: anvil, Temporal, PostgreSQL)', () => {
  endsWithBooksChecked();

  test('detects a transfer, confirms it at the network depth and settles the net amount with fees; the ledger balances', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const { accountId, destination } = await newAccountWithWallet(cred);
    const address = await newDepositAddress(cred, accountId);
    const payer = await newPayer(100n * USDC);
    const feeWallets = [0, 1].map((index) => h.chain.custody.deriveAddress({ purpose: 'fee', index }));
    const feesBefore = await Promise.all(feeWallets.map(tokenBalance));

    // One block deep of two, and the chain held there: confirming until released, however long the reads take.
    const held = await sendOnHeldChain(
      () => send(payer, address.address, 100n * USDC),
      (tx) => paysInToken(tx, address.address),
      'the deposit transfer mined, alone',
    );
    const txHash = held.result;
    try {
      await pokeScanner();
      const [detected] = await waitForDeposits(accountId, (d) => d.length === 1 && d[0]!.status === 'confirming', { what: 'confirming' });
      // Confirming: nothing settled or posted yet.
      const early = await call(`/v2/accounts/${accountId}/deposits/${detected!.id}`, { credential: cred });
      assert.equal(early.status, 200);
      assert.equal(early.body.deposit.status, 'confirming');
      assert.deepEqual(early.body.deposit.settlement, { status: 'pending', txHash: null, settledAt: null, reasonCode: null });
      assert.deepEqual(await entriesOf(detected!.id), {});
      assert.deepEqual(await depositEvents(detected!.id), [
        {
          name: 'deposit.detected',
          accountId,
          payload: { depositId: detected!.id, accountId, depositAddressId: address.id, status: 'detected', statusVersion: 1 },
        },
      ]);
    } finally {
      await held.release();
    }

    const [settled] = await waitForDeposits(accountId, (d) => d[0]!.status === 'settled', { mine: true, what: 'settled' });
    const res = await call(`/v2/accounts/${accountId}/deposits/${settled!.id}`, { credential: cred });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body), ['deposit']);
    const deposit = ZDeposit.parse(res.body.deposit);
    assert.deepEqual(Object.keys(res.body.deposit).sort(), DEPOSIT_KEYS);
    const profile = await h.db.prisma.settlementProfile.findUniqueOrThrow({ where: { accountId } });
    assert.deepEqual(deposit, {
      id: settled!.id,
      accountId,
      depositAddressId: address.id,
      status: 'settled',
      amount: { asset: ASSET, amount: '100000000' },
      sourceTransfer: {
        amount: '100000000',
        txHash: txHash.toLowerCase(),
        logIndex: settled!.logIndex,
        fromAddress: payer.address.toLowerCase(),
      },
      fees: {
        partnerAmountAtomic: '500000',
        platformAmountAtomic: '1000000',
        networkAmountAtomic: '0',
        setupAmountAtomic: '0',
        denomination: ASSET,
        basis: 'source_amount',
        actualReceivedAmountAtomic: '98500000',
      },
      settlement: {
        status: 'confirmed',
        txHash: settled!.settlementTxHash,
        settledAt: settled!.settledAt!.toISOString(),
        reasonCode: null,
      },
      settlementProfileSnapshot: profile.snapshot as Record<string, unknown>,
      txHash: txHash.toLowerCase(),
      finality: deposit.finality,
    });
    assert.match(deposit.settlement.txHash ?? '', /^0x[0-9a-f]{64}$/);
    // Its finality: the source transfer where the scanner read it, and the settlement's legs.
    const required = h.chain.chains.network(h.chainId).confirmations;
    const [source] = deposit.finality.transfers;
    assert.equal(deposit.finality.transfers.length, 1);
    assert.deepEqual(
      [source!.transactionHash, source!.blockNumber !== null, source!.confirmationsRequired],
      [txHash.toLowerCase(), true, required],
    );
    assert.ok(source!.confirmations >= 1);
    const net = deposit.finality.settlement.find((l) => l.leg === 'net');
    assert.equal(net?.transactionHash, deposit.settlement.txHash, 'the net leg is the settlement transaction');

    // On chain: the destination got the net, the fee wallets the fees, and the deposit address is empty.
    assert.equal(await tokenBalance(destination), 98_500_000n);
    assert.equal(await tokenBalance(address.address), 0n);
    const feesAfter = await Promise.all(feeWallets.map(tokenBalance));
    assert.deepEqual([feesAfter[0]! - feesBefore[0]!, feesAfter[1]! - feesBefore[1]!], [1_000_000n, 500_000n]);

    // Ledger: gross in, then gross out as net + each fee; the account's Transaction is posted.
    const ledger = await entriesOf(settled!.id);
    assert.deepEqual(ledger.receipt!.entries, [
      [`custody:deposit:${address.id}`, '100000000', accountId],
      ['external:31337', '-100000000', null],
    ]);
    assert.deepEqual(ledger.settlement!.entries, [
      [`custody:deposit:${address.id}`, '-100000000', accountId],
      [`upa:${accountId}:settled`, '98500000', accountId],
      ['fees:platform', '1000000', null],
      [`fees:partner:${cred.appId}`, '500000', null],
    ]);
    assert.deepEqual(
      ledger.receipt!.transactions.map((t) => [t.accountId, t.direction, t.amountAtomic.toString(), t.status, t.financialLegKind]),
      [[accountId, 'received', '100000000', 'posted', 'deposit']],
    );
    const balances = await call(`/v2/accounts/${accountId}/balances`, { credential: cred });
    assert.deepEqual(
      balances.body.balances.map((b: Record<string, string>) => [b.settledAtomic, b.pendingAtomic]),
      [['98500000', '0']],
    );
    assert.deepEqual(
      (await depositEvents(settled!.id)).map((e) => [e.name, e.payload.status, e.payload.accountId, e.payload.depositId]),
      [
        ['deposit.detected', 'detected', accountId, settled!.id],
        ['deposit.settled', 'settled', accountId, settled!.id],
      ],
    );
    const result = await awaitWorkflowResult(h, settled!.workflowId);
    assert.deepEqual(result, { status: 'settled', statusVersion: 4 });
    await ledgerIsBalanced();
    await settlingWaitsOnBlocksOnlyWithALegBroadcast(settled!);
  });

  test('records a transfer under the minimum as ignored and visible, settles nothing, and counts one at the inclusive minimum', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const { accountId, destination } = await newAccountWithWallet(cred);
    const address = await newDepositAddress(cred, accountId);
    const payer = await newPayer(3n * USDC);
    await send(payer, address.address, USDC - 1n);
    await pokeScanner();
    const [ignored] = await waitForDeposits(accountId, (d) => d.length === 1, { what: 'the ignored deposit' });
    assert.equal(ignored!.status, 'ignored');
    const listed = await call(`/v2/accounts/${accountId}/deposits?status=ignored`, { credential: cred });
    assert.equal(listed.status, 200);
    assert.equal(listed.body.deposits.length, 1);
    const view = ZDeposit.parse(listed.body.deposits[0]);
    assert.equal(view.amount.amount, '999999');
    assert.deepEqual(view.settlement, { status: 'not_required', txHash: null, settledAt: null, reasonCode: 'below_minimum' });
    assert.deepEqual(
      [view.fees.platformAmountAtomic, view.fees.partnerAmountAtomic, view.fees.actualReceivedAmountAtomic],
      ['0', '0', null],
    );
    assert.deepEqual(await depositEvents(ignored!.id), []);
    // Nothing is owed, but the funds reached our address: booked, held for recovery.
    const heldLedger = await entriesOf(ignored!.id);
    assert.deepEqual(Object.keys(heldLedger), ['held']);
    assert.deepEqual(heldLedger.held!.entries, [
      [`custody:deposit:${address.id}`, '999999', accountId],
      ['external:31337', '-999999', null],
    ]);
    assert.deepEqual(
      heldLedger.held!.transactions.map((t) => [t.financialLegKind, t.status]),
      [['recovery_hold', 'pending']],
    );
    const result = await awaitWorkflowResult(h, ignored!.workflowId);
    assert.deepEqual(result, { status: 'ignored', statusVersion: 1 });

    // Exactly the minimum counts (inclusive: true in the sandbox configuration).
    await send(payer, address.address, USDC);
    await pokeScanner();
    const rows = await waitForDeposits(accountId, (d) => d.length === 2 && d[1]!.status === 'settled', {
      mine: true,
      what: 'the minimum deposit settled',
    });
    assert.deepEqual(statuses(rows), ['ignored', 'settled']);
    assert.equal(await tokenBalance(destination), 985_000n);
    assert.equal(await tokenBalance(address.address), USDC - 1n); // the ignored funds stay in custody
    await ledgerIsBalanced();
  });

  test('fails a deposit whose transfer is reorged out before it reaches the confirmation depth, and posts nothing', async () => {
    const cred = await newApp();
    const { accountId } = await newAccountWithWallet(cred);
    const address = await newDepositAddress(cred, accountId);
    const payer = await newPayer(10n * USDC);
    const snapshot = (await rpc('evm_snapshot')) as string;
    // Held one block deep: the deposit stays confirming until the block is dropped.
    const held = await sendOnHeldChain(
      () => send(payer, address.address, 10n * USDC),
      (tx) => paysInToken(tx, address.address),
      'the deposit transfer mined, alone',
    );
    try {
      await pokeScanner();
      await waitForDeposits(accountId, (d) => d.length === 1 && d[0]!.status === 'confirming', { what: 'confirming' });
      // The chain drops the block: the scanner notices by itself (no restart) and reads the new chain.
      assert.equal(await rpc('evm_revert', [snapshot]), true);
    } finally {
      await held.release();
    }
    const [failed] = await waitForDeposits(accountId, (d) => d[0]!.status === 'failed', { what: 'failed' });
    const res = await call(`/v2/accounts/${accountId}/deposits/${failed!.id}`, { credential: cred });
    assert.equal(res.body.deposit.status, 'failed');
    assert.deepEqual(res.body.deposit.settlement, {
      status: 'not_required',
      txHash: null,
      settledAt: null,
      reasonCode: 'source_transfer_dropped',
    });
    assert.deepEqual(
      (await depositEvents(failed!.id)).map((e) => e.name),
      ['deposit.detected', 'deposit.failed'],
    );
    assert.deepEqual(await entriesOf(failed!.id), {});
    await ledgerIsBalanced();
  });

  test('reverses a settled deposit whose source transfer a deep reorg removed, found by the reconciliation pass', async () => {
    const cred = await newApp();
    const { accountId } = await newAccountWithWallet(cred);
    const address = await newDepositAddress(cred, accountId);
    const payer = await newPayer(20n * USDC);
    const snapshot = (await rpc('evm_snapshot')) as string;
    await send(payer, address.address, 20n * USDC);
    await pokeScanner();
    const [settled] = await waitForDeposits(accountId, (d) => d.length === 1 && d[0]!.status === 'settled', {
      mine: true,
      what: 'settled',
    });
    const depositId = settled!.id;
    await mine(3); // deeper than the confirmation depth
    const clean = await cli(['deposits', 'reconcile']);
    assert.equal(clean.reversed.includes(depositId), false);
    // A reorg deeper than the confirmation depth: no service restart, no scanner restart.
    assert.equal(await rpc('evm_revert', [snapshot]), true);
    const summary = await cli(['deposits', 'reconcile']);
    assert.ok(summary.reversed.includes(depositId), JSON.stringify(summary));
    // The pass recorded itself as the last deposit reconciliation: its reversals are its discrepancies.
    const lastRun = async () =>
      (await getHarness()).db.prisma.reconciliationRun.findUniqueOrThrow({ where: { name: 'deposit-reconciliation' } });
    const run = await lastRun();
    assert.deepEqual(
      [run.workflowId, run.outcome, run.discrepancies, run.counts, run.currentRunId],
      [
        depositReconciliationWorkflowId(summary.startedAt),
        'discrepancies',
        summary.reversed.length,
        { reversed: summary.reversed.length },
        null,
      ],
    );
    assert.ok(
      run.startedAt && run.finishedAt && run.startedAt <= run.finishedAt,
      `started ${run.startedAt?.toISOString()}, finished ${run.finishedAt?.toISOString()}`,
    );
    const res = await call(`/v2/accounts/${accountId}/deposits/${depositId}`, { credential: cred });
    assert.equal(res.body.deposit.status, 'reversed');
    assert.equal(res.body.deposit.settlement.status, 'reversed');
    assert.equal(res.body.deposit.settlement.reasonCode, 'source_transfer_invalidated');
    assert.deepEqual(
      (await depositEvents(depositId)).map((e) => [e.name, e.payload.depositId, e.payload.accountId]),
      [
        ['deposit.detected', depositId, accountId],
        ['deposit.settled', depositId, accountId],
        ['deposit.reversed', depositId, accountId],
      ],
    );
    const ledger = await entriesOf(depositId);
    assert.deepEqual(ledger.reversal!.entries, [
      ['external:31337', '20000000', null],
      [`upa:${accountId}:settled`, '-19700000', accountId],
      ['fees:platform', '-200000', null],
      [`fees:partner:${cred.appId}`, '-100000', null],
    ]);
    assert.deepEqual(
      ledger.receipt!.transactions.map((t) => t.status),
      ['reversed'],
    );
    const balances = await call(`/v2/accounts/${accountId}/balances`, { credential: cred });
    assert.deepEqual(
      balances.body.balances.map((b: Record<string, string>) => [b.settledAtomic, b.pendingAtomic]),
      [['0', '0']],
    );
    // A second pass changes nothing.
    const again = await cli(['deposits', 'reconcile']);
    assert.equal(again.reversed.includes(depositId), false);
    const rerun = await lastRun();
    assert.deepEqual(
      [rerun.workflowId, rerun.discrepancies, rerun.outcome],
      [depositReconciliationWorkflowId(again.startedAt), again.reversed.length, again.reversed.length === 0 ? 'clean' : 'discrepancies'],
    );
    assert.equal((await depositEvents(depositId)).length, 3);
    await ledgerIsBalanced();
  });

  test('a step the database refuses for its data holds the deposit with reason data_error and its event; retry resumes it to settled', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const { accountId } = await newAccountWithWallet(cred);
    const address = await newDepositAddress(cred, accountId);
    const payer = await newPayer(10n * USDC);
    // The move to confirming breaks a constraint (SQLSTATE 23514) for this deposit address only.
    const constraint = `test_refuses_${address.id}`.toLowerCase();
    await h.db.prisma.$executeRawUnsafe(
      `ALTER TABLE deposits ADD CONSTRAINT "${constraint}" CHECK (deposit_address_id <> '${address.id}' OR status <> 'confirming') NOT VALID`,
    );
    let held;
    try {
      await send(payer, address.address, 10n * USDC);
      [held] = await waitForDeposits(accountId, (d) => d.length === 1 && d[0]!.status === 'requires_intervention', {
        what: 'held for the refused write',
      });
      assert.equal(held!.settlementReasonCode, 'data_error');
      assert.deepEqual(
        (await depositEvents(held!.id)).map((e) => e.name),
        ['deposit.detected', 'deposit.requires_intervention'],
      );
      assert.deepEqual(await h.engine.pendingActivities(held!.workflowId), []);
    } finally {
      await h.db.prisma.$executeRawUnsafe(`ALTER TABLE deposits DROP CONSTRAINT "${constraint}"`);
    }
    await resolveDeposit({ prisma: h.db.prisma, chains: h.chain.chains }, h.engine, held!.id, { action: 'retry', actor: 'test' });
    const [settled] = await waitForDeposits(accountId, (d) => d[0]!.status === 'settled', { mine: true, what: 'settled after the retry' });
    assert.deepEqual(
      (await depositEvents(settled!.id)).map((e) => e.name),
      ['deposit.detected', 'deposit.requires_intervention', 'deposit.settled'],
    );
    await ledgerIsBalanced();
  });

  test('holds deposits whose settlement keeps failing for an operator, who releases them with the CLI (retry, fail, mark-settled)', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const { accountId, destination } = await newAccountWithWallet(cred);
    const address = await newDepositAddress(cred, accountId);
    const payer = await newPayer(100n * USDC);
    const treasury = h.chain.custody.deriveAddress({ purpose: 'treasury', index: 0 });
    const gas = await h.chain.chains.get(h.chainId).getNativeBalance(treasury);
    // No gas in the treasury: the deposit address can't be topped up, so every settlement attempt fails.
    await rpc('anvil_setBalance', [treasury, '0x0']);
    // Short backoffs: the budget is what is tested, not its pacing (seconds of real time per attempt).
    h.policies.deposit = { retryBackoffSeconds: 0.2 };
    let held;
    try {
      await send(payer, address.address, 10n * USDC);
      await send(payer, address.address, 20n * USDC);
      await send(payer, address.address, 30n * USDC);
      await pokeScanner();
      held = await waitForDeposits(accountId, (d) => d.length === 3 && d.every((x) => x.status === 'requires_intervention'), {
        mine: true,
        what: 'all three deposits held',
      });
    } finally {
      delete h.policies.deposit;
      await rpc('anvil_setBalance', [treasury, `0x${gas.toString(16)}`]);
    }
    const byAmount = (atomic: bigint) => held.find((d) => BigInt(d.amountAtomic.toString()) === atomic)!;
    const [toRetry, toFail, toMark] = [byAmount(10n * USDC), byAmount(20n * USDC), byAmount(30n * USDC)];
    for (const d of held) {
      assert.equal(d.settlementAttempts, 3);
      assert.equal(d.settlementStatus, 'requires_intervention');
      assert.equal(d.settlementReasonCode, 'settlement_requires_intervention');
      assert.deepEqual(
        (await depositEvents(d.id)).map((e) => e.name),
        ['deposit.detected', 'deposit.requires_intervention'],
      );
      // The receipt is posted (the funds are confirmed in custody); nothing is settled yet.
      assert.deepEqual(Object.keys(await entriesOf(d.id)), ['receipt']);
    }
    const view = await call(`/v2/accounts/${accountId}/deposits/${toRetry.id}`, { credential: cred });
    assert.equal(view.body.deposit.status, 'requires_intervention');
    assert.deepEqual(view.body.deposit.settlement, {
      status: 'requires_intervention',
      txHash: null,
      settledAt: null,
      reasonCode: 'settlement_requires_intervention',
    });

    // Only a held deposit can be resolved, and each action needs its argument.
    await assert.rejects(cli(['deposits', 'resolve', 'deposit_unknown', '--action', 'retry']), (err: { code?: number }) => err.code === 1);
    await assert.rejects(cli(['deposits', 'resolve', toMark.id, '--action', 'mark-settled']), (err: { code?: number }) => err.code === 1);
    // A mark-settled waits for a second operator: carol asks, dave (another approver) approves.
    const [carol, dave] = [await createTestOperator('approver'), await createTestOperator('approver')];
    // A request says why.
    const markSettled = (tx: string, reason?: string) => markSettledArgs('deposits', toMark.id, tx, carol.email, reason);
    await assert.rejects(
      cli(markSettled(`0x${'ab'.repeat(32)}`)),
      (err: { code?: number; stderr?: string }) => err.code === 1 && /Say why/.test(err.stderr ?? ''),
    );

    // mark-settled is checked against the chain when it is asked for: a transfer that does not come from
    // the deposit address is refused, and nothing waits for an approval.
    const notOurs = await send(payer, destination, 29_550_000n);
    await mine(2);
    await assert.rejects(
      cli(markSettled(notOurs, 'paid by hand')),
      (err: { code?: number; stderr?: string }) => err.code === 1 && /does not move/.test(err.stderr ?? ''),
    );
    assert.equal(await h.db.prisma.operatorApproval.count({ where: { targetId: toMark.id } }), 0);
    // The operator pays the third one's net amount out of the deposit address by hand and records that
    // transaction; the service then pays its fees.
    const row = await h.db.prisma.depositAddress.findUniqueOrThrow({ where: { id: address.id } });
    const custodySigner = h.chain.custody.signer({ purpose: 'deposit', index: row.custodyIndex });
    await h.chain.chains.get(h.chainId).sendNative({ from: payer, to: custodySigner.address, amountWei: 10n ** 16n });
    const manual = await h.chain.chains
      .get(h.chainId)
      .sendTokenTransfer({ from: custodySigner, token: TOKEN, to: destination as `0x${string}`, amountAtomic: 29_550_000n });
    await mine(2);
    // Three operators at once: each resolve is its own CLI process. retry and a deposit's fail are
    // carried out at once; the mark-settled becomes a request.
    const [retried, failed, requested] = await Promise.all([
      cli(['deposits', 'resolve', toRetry.id, '--action', 'retry', '--actor', 'ops:alice']),
      cli(['deposits', 'resolve', toFail.id, '--action', 'fail', '--reason', 'returned to the sender by support', '--actor', 'ops:bob']),
      requestByCli(markSettled(manual, 'paid by hand')),
    ]);
    assert.deepEqual(retried, { depositId: toRetry.id, action: 'retry', signalled: true });
    assert.deepEqual(failed, { depositId: toFail.id, action: 'fail', signalled: true });
    assert.deepEqual(
      [requested.action, requested.target, requested.params, requested.reason, requested.requestedBy],
      ['mark-settled', { type: 'deposit', id: toMark.id }, { action: 'mark-settled', txHash: manual }, 'paid by hand', carol.email],
    );
    // The other two are done while the mark-settled waits: still held, never signalled, nothing recorded.
    const before = await waitForDeposits(accountId, (d) => d.filter((x) => x.status === 'settled' || x.status === 'failed').length === 2, {
      mine: true,
      what: 'the retried and the failed one resolved',
    });
    const waiting = before.find((d) => d.id === toMark.id)!;
    assert.deepEqual([waiting.status, waiting.settlementStatus], ['requires_intervention', 'requires_intervention']);
    assert.deepEqual(await resolutionSignals(toMark.workflowId), []);
    assert.equal(await h.db.prisma.depositResolution.count({ where: { depositId: toMark.id } }), 0);
    assert.deepEqual(Object.keys(await entriesOf(toMark.id)), ['receipt']);

    // Nobody approves their own request, whatever their role; nothing is decided by the refusal.
    assert.match(await approvalRefusedByCli(requested.id, carol), /not the one who asked/);
    assert.equal((await h.db.prisma.operatorApproval.findUniqueOrThrow({ where: { id: requested.id } })).status, 'pending');
    // A second operator approves: the release is carried out as asked, under the approver's name.
    const approved = await approveByCli(requested.id, dave);
    assert.deepEqual(approved.result, { depositId: toMark.id, action: 'mark-settled', signalled: true });
    assert.equal(approved.approval.requestedBy, carol.email);
    assert.deepEqual(await resolutionSignals(toMark.workflowId), [
      { action: 'mark-settled', txHash: manual.toLowerCase(), reason: 'paid by hand', actor: dave.email },
    ]);
    const done = await waitForDeposits(accountId, (d) => d.every((x) => x.status === 'settled' || x.status === 'failed'), {
      mine: true,
      what: 'resolved',
    });
    const status = Object.fromEntries(done.map((d) => [d.id, d]));
    assert.equal(status[toRetry.id]!.status, 'settled');
    assert.equal(status[toFail.id]!.status, 'failed');
    assert.equal(status[toMark.id]!.status, 'settled');
    assert.equal(status[toMark.id]!.settlementTxHash, manual.toLowerCase());
    assert.equal(status[toFail.id]!.failureReason, 'returned to the sender by support');
    assert.equal(status[toFail.id]!.settlementStatus, 'cancelled');
    // Paid on chain: 9.85 by the retried settlement, 29.55 by hand (and its fees by the service); the
    // failed one's 20 are left for the operator to return.
    assert.equal(await tokenBalance(destination), 9_850_000n + 29_550_000n + 29_550_000n);
    assert.equal(await tokenBalance(address.address), 20n * USDC);

    const resolutions = await h.db.prisma.depositResolution.findMany({ where: { depositId: { in: held.map((d) => d.id) } } });
    assert.deepEqual(
      resolutions.map((r) => [r.depositId, r.action, r.actor, r.reason, r.txHash]).sort(),
      [
        [toRetry.id, 'retry', 'ops:alice', null, null],
        [toFail.id, 'fail', 'ops:bob', 'returned to the sender by support', null],
        [toMark.id, 'mark-settled', dave.email, 'paid by hand', manual.toLowerCase()],
      ].sort(),
    );
    // The audit: each refusal, the request, the self-approval refused, the approval and the release it made.
    const audit = await h.db.prisma.operatorAction.findMany({
      where: { targetId: { in: [toMark.id, requested.id] } },
      orderBy: { createdAt: 'asc' },
    });
    assert.deepEqual(
      audit.map((a) => [a.targetType, a.action, a.outcome, a.actor, (a.details as { approvalId?: string } | null)?.approvalId ?? null]),
      [
        ['deposit', 'mark-settled', 'refused', carol.email, null],
        ['deposit', 'mark-settled', 'refused', carol.email, null],
        ['deposit', 'mark-settled', 'requested', carol.email, requested.id],
        ['approval', 'approve', 'refused', carol.email, null],
        ['approval', 'approve', 'applied', dave.email, null],
        ['deposit', 'mark-settled', 'signalled', dave.email, requested.id],
      ],
    );
    assert.deepEqual(
      (await depositEvents(toRetry.id)).map((e) => e.name),
      ['deposit.detected', 'deposit.requires_intervention', 'deposit.settled'],
    );
    assert.deepEqual(
      (await depositEvents(toFail.id)).map((e) => e.name),
      ['deposit.detected', 'deposit.requires_intervention', 'deposit.failed'],
    );
    assert.deepEqual(
      (await depositEvents(toMark.id)).map((e) => e.name),
      ['deposit.detected', 'deposit.requires_intervention', 'deposit.settled'],
    );
    const failedLedger = await entriesOf(toFail.id);
    // Failed, but its 20 USDC are still at the address: held for recovery, in the books and the balances.
    assert.deepEqual(failedLedger.receipt_reversal!.entries, [
      [`custody:deposit:${address.id}`, '-20000000', accountId],
      [`custody:deposit:${address.id}`, '20000000', accountId],
    ]);
    assert.deepEqual(
      failedLedger.receipt!.transactions.map((t) => t.status),
      ['reversed'],
    );
    assert.deepEqual(
      failedLedger.receipt_reversal!.transactions.map((t) => [t.financialLegKind, t.status]),
      [['recovery_hold', 'pending']],
    );
    assert.deepEqual(Object.keys(await entriesOf(toMark.id)).sort(), ['receipt', 'settlement']);
    const balances = await call(`/v2/accounts/${accountId}/balances`, { credential: cred });
    assert.deepEqual(
      balances.body.balances.map((b: Record<string, string>) => [b.settledAtomic, b.pendingAtomic]),
      [['39400000', '20000000']],
    );
    await ledgerIsBalanced();

    // The workflows' histories (signals, retries, backoff timers) replay deterministically on today's code.
    for (const d of held) {
      const history = await h.probes.workflowHistory(d.workflowId);
      await Worker.runReplayHistory({ workflowBundle: h.workflowBundle }, history);
    }
  });

  test("lists an account's deposits newest first, filtered by status and paged with a cursor to the end", async () => {
    const cred = await newApp();
    const { accountId } = await newAccountWithWallet(cred);
    const address = await newDepositAddress(cred, accountId);
    const payer = await newPayer(10n * USDC);
    for (const amount of [2n * USDC, USDC / 2n, 3n * USDC, USDC / 4n, 4n * USDC]) await send(payer, address.address, amount);
    await pokeScanner();
    const rows = await waitForDeposits(
      accountId,
      (d) => d.length === 5 && d.every((x) => x.status === 'settled' || x.status === 'ignored'),
      { mine: true, what: 'five deposits done' },
    );
    assert.deepEqual(statuses(rows).sort(), ['ignored', 'ignored', 'settled', 'settled', 'settled']);
    const newestFirst = [...rows].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1)).map((r) => r.id);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = await call<any>(`/v2/accounts/${accountId}/deposits?${query}`, { credential: cred });
      assert.equal(page.status, 200);
      assert.deepEqual(Object.keys(page.body).sort(), ['accountId', 'deposits', 'nextCursor']);
      assert.equal(page.body.accountId, accountId);
      assert.ok(page.body.deposits.length <= 2);
      seen.push(...page.body.deposits.map((d: { id: string }) => d.id));
      cursor = page.body.nextCursor;
      pages += 1;
    } while (cursor);
    assert.equal(pages, 3);
    assert.deepEqual(seen, newestFirst);

    const settled = await call(`/v2/accounts/${accountId}/deposits?status=settled&limit=2`, { credential: cred });
    assert.deepEqual(
      settled.body.deposits.map((d: { status: string }) => d.status),
      ['settled', 'settled'],
    );
    const rest = await call(
      `/v2/accounts/${accountId}/deposits?status=settled&limit=2&cursor=${encodeURIComponent(settled.body.nextCursor)}`,
      { credential: cred },
    );
    assert.equal(rest.body.deposits.length, 1);
    assert.equal(rest.body.nextCursor, null);
    const ignored = await call(`/v2/accounts/${accountId}/deposits?status=ignored`, { credential: cred });
    assert.deepEqual(ignored.body.deposits.map((d: { amount: { amount: string } }) => d.amount.amount).sort(), ['250000', '500000']);
    assert.equal(ignored.body.nextCursor, null);
    // A cursor belongs to its filter: replayed against another one it is refused.
    const crossed = await call(`/v2/accounts/${accountId}/deposits?status=ignored&cursor=${encodeURIComponent(settled.body.nextCursor)}`, {
      credential: cred,
    });
    assert.equal(crossed.status, 400);
    const defaults = await call(`/v2/accounts/${accountId}/deposits`, { credential: cred });
    assert.equal(defaults.body.deposits.length, 5);
    await ledgerIsBalanced();
  });
});
