/**
 * The JSON-safe form of a payment machine transition (amounts as decimal strings): what the
 * PaymentWorkflow hands the activity that persists one step. Pure: the workflow imports this file.
 */
import { pendingFundingAtomic, type PaymentEventName, type PaymentState, type PayoutState, type Transition } from './payment-machine';

export interface PersistedTransition {
  fromStatusVersion: number;
  statusVersion: number;
  status: string;
  stage: string | null;
  operationalState: string;
  operationalReasonCode: string | null;
  confirmedAtomic: string;
  /** Seen funding still confirming (what the payer is not asked for again). Absent from older steps. */
  pendingAtomic?: string;
  settlementTxHash: string | null;
  events: PaymentEventName[];
  stamps: Partial<Record<'acceptedAt' | 'succeededAt' | 'cancelledAt', string>>;
  incidents: Array<{ kind: string; amountAtomic: string; transferKey: string | null }>;
  transferStatuses: Array<{ key: string; status: string; role?: string }>;
  ledger: Transition['ledger'];
  /** Bank Payments: the off-ramp leg after the step. Absent for upa Payments and older steps. */
  payout?: PayoutState;
  /** The provider's reason for a failed or returned payout (set with that step). */
  payoutReasonCode?: string | null;
  cancel: { reasonCode: string; reason: string | null } | null;
  failure: { code: string; message: string } | null;
  /** Workflow time of the step; an incident with no transfer of its own takes its id from it (such a step moves the status). */
  at: string;
}

export function toPersistedTransition(t: Transition, at: string): PersistedTransition {
  const s = t.state;
  return {
    fromStatusVersion: t.fromStatusVersion,
    statusVersion: s.statusVersion,
    status: s.status,
    stage: s.stage,
    operationalState: s.operationalState,
    operationalReasonCode: s.operationalReasonCode,
    confirmedAtomic: s.confirmedAtomic.toString(),
    pendingAtomic: pendingFundingAtomic(s).toString(),
    settlementTxHash: s.settlementTxHash,
    events: t.events,
    stamps: t.stamps,
    incidents: t.incidents.map((i) => ({ kind: i.kind, amountAtomic: i.amountAtomic.toString(), transferKey: i.transferKey })),
    // Only what this step changed: a step's cost must not grow with the transfers seen so far.
    transferStatuses: t.transferStatuses,
    ledger: t.ledger,
    ...(s.payout ? { payout: s.payout } : {}),
    ...(t.payoutReasonCode !== undefined ? { payoutReasonCode: t.payoutReasonCode } : {}),
    cancel: t.cancel ?? null,
    failure: t.failure ?? null,
    at,
  };
}

/** The machine state in JSON-safe form, carried across continue-as-new and loaded when a run resumes. */
export interface CarriedPaymentState {
  intent: PaymentState['intent'];
  status: PaymentState['status'];
  stage: PaymentState['stage'];
  operationalState: PaymentState['operationalState'];
  operationalReasonCode: string | null;
  statusVersion: number;
  requiredAtomic: string;
  confirmedAtomic: string;
  transfers: Array<{
    key: string;
    amountAtomic: string;
    status: PaymentState['transfers'][number]['status'];
    role: PaymentState['transfers'][number]['role'];
  }>;
  settlementAttempts: number;
  settlementTxHash: string | null;
  payout?: PayoutState;
}

export function toCarriedState(s: PaymentState): CarriedPaymentState {
  return {
    ...s,
    requiredAtomic: s.requiredAtomic.toString(),
    confirmedAtomic: s.confirmedAtomic.toString(),
    transfers: s.transfers.map((t) => ({ ...t, amountAtomic: t.amountAtomic.toString() })),
  };
}

export function fromCarriedState(c: CarriedPaymentState): PaymentState {
  return {
    ...c,
    requiredAtomic: BigInt(c.requiredAtomic),
    confirmedAtomic: BigInt(c.confirmedAtomic),
    transfers: c.transfers.map((t) => ({ ...t, amountAtomic: BigInt(t.amountAtomic) })),
  };
}
