import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { formatCrashTarget, parseCrashTarget } from '../../src/platform/crash-points';
import { cellName, cellsFromTrace } from '../../simulate/crash-matrix';

describe('crash points', () => {
  test('CRASH_AT names a point and, after #, which hit of it (the first when left out); anything else is refused', () => {
    assert.deepEqual(parseCrashTarget('settlement.leg.after-broadcast'), { point: 'settlement.leg.after-broadcast', occurrence: 1 });
    assert.deepEqual(parseCrashTarget('activity.persistPaymentTransition.before#3'), {
      point: 'activity.persistPaymentTransition.before',
      occurrence: 3,
    });
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

  test('a transition write run again (the same run and activity id: a local activity re-run after a refused completion) is no new cell', () => {
    const D = 'depositWorkflow';
    const at = (n: number, activityId: string) => ({
      point: 'activity.persistDepositTransition.before',
      n,
      workflowType: D,
      runId: 'r1',
      activityId,
    });
    const trace = [at(1, '2'), at(2, '4'), at(3, '6'), at(4, '10'), at(5, '10')];
    assert.deepEqual(cellsFromTrace('deposit', trace).map(cellName), [
      'deposit:activity.persistDepositTransition.before',
      'deposit:activity.persistDepositTransition.before#2',
      'deposit:activity.persistDepositTransition.before#3',
      'deposit:activity.persistDepositTransition.before#4',
    ]);
  });

  test("a flow's cells are its own workflow's points: a refund's or a vault funding's, not the Payment's whose settlement points it passes", () => {
    const trace = [
      { point: 'activity.persistPaymentTransition.before', n: 1, workflowType: 'paymentWorkflow' },
      { point: 'activity.recordFundReturnBroadcast.before', n: 1, workflowType: 'fundReturnWorkflow' },
      { point: 'settlement.leg.after-broadcast', n: 1, workflowType: 'fundReturnWorkflow' },
      { point: 'settlement.leg.after-broadcast', n: 2, workflowType: 'paymentWorkflow' },
      { point: 'activity.recordFundReturnBroadcast.before', n: 2, workflowType: 'fundReturnWorkflow' },
      { point: 'settlement.leg.after-broadcast', n: 3, workflowType: 'vaultFundingWorkflow' },
    ];
    assert.deepEqual(cellsFromTrace('refund', trace).map(cellName), [
      'refund:activity.recordFundReturnBroadcast.before',
      'refund:settlement.leg.after-broadcast',
      'refund:activity.recordFundReturnBroadcast.before#2',
    ]);
    assert.deepEqual(cellsFromTrace('vault-funding', trace).map(cellName), ['vault-funding:settlement.leg.after-broadcast#3']);
    assert.deepEqual(cellsFromTrace('payout', trace).map(cellName), [
      'payout:activity.persistPaymentTransition.before',
      'payout:settlement.leg.after-broadcast#2',
    ]);
  });

  test("a point reached inside an activity is traced with that activity's workflow", () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'crash-trace-'));
    const file = path.join(dir, 'trace.jsonl');
    const script = [
      "const { crashPoint, withCrashContext } = require('./src/platform/crash-points');",
      "withCrashContext(() => ({ workflowType: 'fundReturnWorkflow' }), async () => { await Promise.resolve(); crashPoint('settlement.leg.after-record'); });",
      "setTimeout(() => crashPoint('outside'), 10);",
    ].join('\n');
    execFileSync(process.execPath, ['--import', 'tsx', '-e', script], {
      cwd: path.resolve(__dirname, '../..'),
      env: { ...process.env, CRASH_POINTS_TRACE: file, CRASH_AT: '' },
    });
    const lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(lines, [
      { point: 'settlement.leg.after-record', n: 1, workflowType: 'fundReturnWorkflow' },
      { point: 'outside', n: 1 },
    ]);
  });
});
