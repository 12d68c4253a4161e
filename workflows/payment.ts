import { ApplicationFailure, condition, proxyActivities, setHandler, sleep, uuid4, workflowInfo } from '@temporalio/workflow';
import type { PaymentActivities, PersistedTransition } from '../activities/payments';
import {
  decideCancel,
  initialState,
  isOpen,
  isTerminal,
  onExpired,
  onOperatorResolution,
  onSettlementAttemptFailed,
  onSettlementBroadcast,
  onSettlementConfirmed,
  onSettlementTrouble,
  onTransferDetected,
  onTransfersVerified,
  pendingTransfers,
  type PaymentState,
  type Transition,
} from '../src/domain/payments/payment-machine';
import {
  cancelUpdate,
  PAYMENT_NOT_CANCELABLE,
  resolveSignal,
  transferDetectedSignal,
  type CancelRequest,
  type CancelResult,
  type OperatorResolution,
  type PaymentWorkflowInput,
  type TransferSeen,
} from './payment-api';
import { wakeOn } from './wait';
import { toOperatorAction } from '../src/domain/operator-resolution';

const db = proxyActivities<PaymentActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});
// One settlement attempt per call: the workflow owns the retry budget, so the partner can see it.
const settlement = proxyActivities<PaymentActivities>({
  startToCloseTimeout: '2m',
  retry: { maximumAttempts: 1 },
});

type Command =
  | { type: 'transfer'; transfer: TransferSeen }
  | { type: 'resolve'; resolution: OperatorResolution }
  | { type: 'cancel'; id: number; request: CancelRequest };

/**
 * One Payment's whole lifecycle (workflow id = Payment id). A thin loop: messages go into a queue,
 * the pure payment machine decides, and activities persist each transition with its events.
 */
export async function paymentWorkflow(input: PaymentWorkflowInput): Promise<{ status: string; statusVersion: number }> {
  let state: PaymentState = initialState(input.intent, BigInt(input.requiredAtomic));
  const queue: Command[] = [];
  const cancelOutcomes = new Map<number, CancelResult | ApplicationFailure>();
  let nextCancelId = 0;

  setHandler(transferDetectedSignal, (transfer) => void queue.push({ type: 'transfer', transfer }));
  setHandler(resolveSignal, (resolution) => void queue.push({ type: 'resolve', resolution }));
  setHandler(cancelUpdate, async (request) => {
    const id = nextCancelId++;
    queue.push({ type: 'cancel', id, request });
    await condition(() => cancelOutcomes.has(id));
    const outcome = cancelOutcomes.get(id)!;
    if (outcome instanceof ApplicationFailure) throw outcome;
    return outcome;
  });

  const nowIso = () => new Date(Date.now()).toISOString();
  const apply = async (t: Transition | null) => {
    if (!t) return;
    await db.persistPaymentTransition(input.paymentId, serialize(t, nowIso()));
    state = t.state;
  };

  async function handle(cmd: Command): Promise<void> {
    if (cmd.type === 'transfer') {
      await apply(onTransferDetected(state, { key: cmd.transfer.key, amountAtomic: BigInt(cmd.transfer.amountAtomic) }));
    } else if (cmd.type === 'cancel') {
      const decision = decideCancel(state, cmd.request.reasonCode, cmd.request.reason, nowIso());
      if (decision.outcome === 'cancelled') await apply(decision.transition);
      cancelOutcomes.set(
        cmd.id,
        decision.outcome === 'refused'
          ? ApplicationFailure.create({ type: PAYMENT_NOT_CANCELABLE, message: decision.message, details: [decision.reasonCode], nonRetryable: true })
          : { outcome: decision.outcome },
      );
    } else {
      const resolved = onOperatorResolution(state, toOperatorAction(cmd.resolution), nowIso());
      if (!resolved) return; // nothing on hold: a stray or repeated resolution changes nothing
      await db.recordPaymentResolution({ paymentId: input.paymentId, id: `resolution_${uuid4()}`, ...cmd.resolution });
      await apply(resolved.transition);
    }
  }

  const drain = async () => {
    while (queue.length > 0) await handle(queue.shift()!);
  };
  // Polls start fast (a confirmation often lands within a block) and back off to maxPollSeconds.
  const pollMs = (round: number) =>
    Math.min(input.settlement.confirmationPollSeconds * 1000 * 2 ** round, input.settlement.maxPollSeconds * 1000);
  let verifyRound = 0;
  const expiresAtMs = workflowInfo().startTime.getTime() + input.expiresInSeconds * 1000;

  async function settle(): Promise<void> {
    let txHash: string;
    try {
      ({ txHash } = await settlement.broadcastSettlement({ paymentId: input.paymentId }));
    } catch {
      await apply(onSettlementAttemptFailed(state, { maxAttempts: input.settlement.maxAttempts }));
      if (state.operationalState === 'retrying') {
        await sleep(input.settlement.retryBackoffSeconds * 1000 * 2 ** (state.settlementAttempts - 1));
      }
      return;
    }
    await apply(onSettlementBroadcast(state, txHash));
    for (let check = 0; check < input.settlement.maxConfirmationChecks; check += 1) {
      const status = await db.checkSettlement({ paymentId: input.paymentId, confirmations: input.confirmations });
      if (status === 'confirmed') return apply(onSettlementConfirmed(state, txHash, nowIso()));
      if (status === 'reverted') return apply(onSettlementTrouble(state, 'settlement_failed'));
      await wakeOn(() => queue.length > 0, pollMs(check));
      await drain();
    }
    // Broadcast but never confirmed: the transfer may still land, so nothing is resent automatically.
    await apply(onSettlementTrouble(state, 'settlement_unconfirmed'));
  }

  while (!isTerminal(state)) {
    await drain();
    if (isTerminal(state)) break;
    if (isOpen(state)) {
      const pending = pendingTransfers(state);
      const untilExpiry = expiresAtMs - Date.now();
      if (pending.length > 0) {
        await wakeOn(() => queue.length > 0, pollMs(verifyRound++));
        const results = await db.verifyPaymentTransfers({
          chainId: input.chainId,
          token: input.tokenAddress,
          to: input.escrowAddress,
          confirmations: input.confirmations,
          transfers: pendingTransfers(state).map((t) => t.key),
        });
        const verified = onTransfersVerified(state, results, nowIso());
        if (verified) verifyRound = 0;
        await apply(verified);
      } else if (untilExpiry <= 0) {
        await apply(onExpired(state));
      } else {
        await wakeOn(() => queue.length > 0, untilExpiry);
      }
    } else if (state.operationalState === 'requires_intervention') {
      // Held on purpose: only an operator's resolution (or a duplicate transfer to record) wakes it.
      await condition(() => queue.length > 0);
    } else {
      await settle();
    }
  }
  await drain();
  return { status: state.status, statusVersion: state.statusVersion };
}

function serialize(t: Transition, nowIso: string): PersistedTransition {
  const s = t.state;
  return {
    fromStatusVersion: t.fromStatusVersion,
    statusVersion: s.statusVersion,
    status: s.status,
    stage: s.stage,
    operationalState: s.operationalState,
    operationalReasonCode: s.operationalReasonCode,
    confirmedAtomic: s.confirmedAtomic.toString(),
    settlementTxHash: s.settlementTxHash,
    events: t.events,
    stamps: t.stamps,
    incidents: t.incidents.map((i) => ({ kind: i.kind, amountAtomic: i.amountAtomic.toString(), transferKey: i.transferKey })),
    transferStatuses: [
      ...t.transferStatuses,
      ...s.transfers.filter((x) => x.role !== 'funding').map((x) => ({ key: x.key, status: x.status, role: x.role })),
    ],
    ledger: t.ledger,
    cancel: t.cancel ?? null,
    failure: t.failure ?? null,
    at: nowIso,
  };
}
