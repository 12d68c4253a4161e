import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, newPayer, payTo } from '../support/chain';
import { getHarness } from '../support/harness';
import { cli } from '../support/cli';
import { endsWithBooksChecked } from '../support/books';
import { createPayment, eventNames, getPayment, newMerchant, waitForPayment } from '../support/fixtures';

const USDC = (n: number) => BigInt(n) * 1_000_000n;

/** Runs a CLI command that must exit 1; answers its stderr. */
async function refused(args: string[]): Promise<string> {
  const err = await cli(args).then(
    () => assert.fail(`${args.join(' ')} exited 0`),
    (e: { code?: number; stderr?: string }) => e,
  );
  assert.equal(err.code, 1, err.stderr);
  return err.stderr ?? '';
}

describe('A Payment held when already final', () => {
  endsWithBooksChecked();

  test('a succeeded Payment held by a refused write: fail and mark-settled are refused with the reason, retry releases it and records what was held', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const p = (await createPayment(m, { amount: '2' })).body.payment;
    const payer = await newPayer(USDC(3));
    await payTo(payer, p.funding.depositAddress.address, USDC(2));
    await waitForPayment(m, p.id, 'succeeded', (x) => x.status === 'succeeded');

    // The database refuses the late transfer's duplicate role for this Payment only (SQLSTATE 23514).
    const constraint = `test_refuses_${p.id}`.toLowerCase();
    await h.db.prisma.$executeRawUnsafe(
      `ALTER TABLE payment_transfers ADD CONSTRAINT "${constraint}" CHECK (payment_id <> '${p.id}' OR role IS DISTINCT FROM 'duplicate') NOT VALID`,
    );
    try {
      await payTo(payer, p.funding.depositAddress.address, USDC(1));
      const held = await waitForPayment(m, p.id, 'held for the refused write', (x) => x.operationalState === 'requires_intervention');
      assert.equal(held.status, 'succeeded');
      const row = await h.db.prisma.payment.findUniqueOrThrow({ where: { id: p.id } });
      assert.equal(row.operationalReasonCode, 'data_error');
      // The refused step was the transfer's first: the final Payment's run has nothing left to follow and ends, held.
      await eventually(async () => (await h.engine.paymentWorkflowState(p.id)) === 'closed', 'the held run ended');

      const failed = await refused(['payments', 'resolve', p.id, '--action', 'fail', '--reason', 'give up', '--actor', 'erin']);
      assert.match(failed, /already succeeded \(final\): fail would change a final status; retry releases the hold/);
      const marked = await refused([
        'payments',
        'resolve',
        p.id,
        '--action',
        'mark-settled',
        '--tx',
        `0x${'12'.repeat(32)}`,
        '--reason',
        'paid by hand',
        '--actor',
        'erin',
      ]);
      assert.match(marked, /already succeeded \(final\): mark-settled would change a final status/);
      // Both would wait for a second operator, but are refused when asked for: no request is stored.
      assert.equal(await h.db.prisma.operatorApproval.count({ where: { targetId: p.id } }), 0);
      const audit = await h.db.prisma.operatorAction.findMany({ where: { targetId: p.id }, orderBy: { createdAt: 'asc' } });
      assert.deepEqual(
        audit.map((a) => [a.action, a.outcome]),
        [
          ['fail', 'refused'],
          ['mark-settled', 'refused'],
        ],
      );
    } finally {
      await h.db.prisma.$executeRawUnsafe(`ALTER TABLE payment_transfers DROP CONSTRAINT "${constraint}"`);
    }

    const out = await cli(['payments', 'resolve', p.id, '--action', 'retry', '--actor', 'erin', '--reason', 'constraint fixed']);
    assert.deepEqual(out, { paymentId: p.id, action: 'retry', signalled: true });
    const released = await waitForPayment(
      m,
      p.id,
      'released, the late transfer recorded as a duplicate',
      (x) => x.operationalState === 'normal' && x.incidentRecoverySummary.count === 1,
    );
    assert.equal(released.status, 'succeeded');
    assert.equal(released.incidentRecoverySummary.requestedAmountAtomic, '1000000');
    const names = await eventNames(p.id);
    assert.ok(names.includes('payment.duplicate_received'), names.join(', '));
    assert.equal(names.filter((n) => n === 'payment.failed').length, 0);
    const resolutions = await h.db.prisma.paymentResolution.findMany({ where: { paymentId: p.id } });
    assert.deepEqual(
      resolutions.map((r) => [r.action, r.actor]),
      [['retry', 'erin']],
    );
    assert.equal((await getPayment(m, p.id)).payment.status, 'succeeded');
  });
});
