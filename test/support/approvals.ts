import assert from 'node:assert/strict';
import { defaultPayloadConverter } from '@temporalio/common';
import { cli, CliExit } from './cli';
import { getHarness } from './harness';
import type { TestOperator } from './operators';
import type { ApprovalView } from '../../src/domain/operators/operator-approvals';

/** A two-person approval as the CLI and the admin API print it. */
export type Approval = ApprovalView;

/**
 * A money-moving release asked for through the CLI (`<kind> resolve <id> --action mark-settled ...`):
 * it answers a pending request and nothing else (no `signalled`), which this answers.
 */
export async function requestByCli(args: string[]): Promise<Approval> {
  const out = await cli(args);
  assert.deepEqual(Object.keys(out), ['approval'], JSON.stringify(out));
  const approval = out.approval as Approval;
  assert.match(approval.id, /^approval_[A-Za-z0-9]+$/);
  assert.deepEqual([approval.status, approval.decidedBy, approval.decidedAt, approval.resultId], ['pending', null, null, null]);
  return approval;
}

/** `<payments|deposits> resolve <id> --action mark-settled --tx <hash> [--reason <why>] --actor <email>`: a request once it says why. */
export function markSettledArgs(kind: 'payments' | 'deposits', id: string, tx: string, actor: string, reason?: string): string[] {
  return [kind, 'resolve', id, '--action', 'mark-settled', '--tx', tx, ...(reason ? ['--reason', reason] : []), '--actor', actor];
}

/**
 * A second operator approves a request through the CLI (`approvals approve <id> --actor <email>`),
 * which carries it out under the approver's name: answers the decided approval and what the release
 * itself printed.
 */
export async function approveByCli(approvalId: string, approver: TestOperator): Promise<{ approval: Approval; result: unknown }> {
  const h = await getHarness();
  const out = await cli(['approvals', 'approve', approvalId, '--actor', approver.email], { DATA_DIR: h.custodyDataDir });
  assert.deepEqual(Object.keys(out).sort(), ['approval', 'result'], JSON.stringify(out));
  const approval = out.approval as Approval;
  assert.deepEqual([approval.id, approval.status, approval.decidedBy], [approvalId, 'approved', approver.email]);
  return { approval, result: out.result };
}

/** `approvals approve` that must exit 1 (the operator may not decide this request): answers its stderr. */
export async function approvalRefusedByCli(approvalId: string, actor: TestOperator): Promise<string> {
  const h = await getHarness();
  const err = await cli(['approvals', 'approve', approvalId, '--actor', actor.email], { DATA_DIR: h.custodyDataDir }).then(
    (out) => assert.fail(`approvals approve ${approvalId} by ${actor.email} exited 0: ${JSON.stringify(out)}`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof CliExit, String(err));
  assert.equal(err.code, 1, err.stderr);
  return err.stderr;
}

const RESOLVE_SIGNALS = new Set(['resolve', 'resolveDeposit', 'resolveFundReturn']);

/**
 * The operator resolutions a workflow was signalled, read from its history (the signal is in the
 * history once the signalling call returns): none while a request waits for its approval.
 */
export async function resolutionSignals(workflowId: string): Promise<Array<Record<string, unknown>>> {
  const h = await getHarness();
  const history = await h.probes.workflowHistory(workflowId);
  return (history.events ?? []).flatMap((e) => {
    const signal = e.workflowExecutionSignaledEventAttributes;
    if (!signal || !RESOLVE_SIGNALS.has(signal.signalName ?? '')) return [];
    return [defaultPayloadConverter.fromPayload(signal.input!.payloads![0]!) as Record<string, unknown>];
  });
}
