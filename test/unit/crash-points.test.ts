import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { formatCrashTarget, parseCrashTarget } from '../../src/runtime/crash-points';
import { cellName, cellsFromTrace } from '../../simulate/crash-matrix';

describe('crash points', () => {
  test('CRASH_AT names a point and, after #, which hit of it (the first when left out); anything else is refused', () => {
    assert.deepEqual(parseCrashTarget('settlement.leg.after-broadcast'), { point: 'settlement.leg.after-broadcast', occurrence: 1 });
    assert.deepEqual(parseCrashTarget('activity.persistPaymentTransition.before#3'), { point: 'activity.persistPaymentTransition.before', occurrence: 3 });
    assert.equal(formatCrashTarget(parseCrashTarget('activity.x.after#1')), 'activity.x.after');
    for (const bad of ['', 'a b', 'x#0', 'x#', 'x#-1']) assert.throws(() => parseCrashTarget(bad), /CRASH_AT/);
  });

  test("the matrix's cells are a lifecycle's points at their first hit, and every hit of a transition write; other workflows' points are left out", () => {
    const P = 'paymentWorkflow';
    const trace = [
      { point: 'activity.scanTransfers.before', n: 1, workflowType: 'chainScannerWorkflow' },
      { point: 'activity.persistPaymentTransition.before', n: 1, workflowType: P },
      { point: 'activity.verifyPaymentTransfers.before', n: 1, workflowType: P },
      { point: 'activity.verifyPaymentTransfers.before', n: 2, workflowType: P },
      { point: 'activity.persistPaymentTransition.before', n: 2, workflowType: P },
      { point: 'settlement.leg.after-record', n: 1 },
      { point: 'settlement.leg.after-record', n: 2 },
      { point: 'activity.recordDepositDetected.before', n: 1, workflowType: 'depositWorkflow' },
    ];
    assert.deepEqual(cellsFromTrace('payment', trace).map(cellName), [
      'payment:activity.persistPaymentTransition.before',
      'payment:activity.verifyPaymentTransfers.before',
      'payment:activity.persistPaymentTransition.before#2',
      'payment:settlement.leg.after-record',
    ]);
  });
});
