/**
 * The JSON-safe form of a payment machine transition (amounts as decimal strings): what the
 * PaymentWorkflow hands the activity that persists one step. Pure: the workflow imports this file.
 */
import type { PaymentEventName, Transition } from './payment-machine';

export interface PersistedTransition {
  fromStatusVersion: number;
  statusVersion: number;
  status: string;
  stage: string | null;
  operationalState: string;
  operationalReasonCode: string | null;
  confirmedAtomic: string;
  settlementTxHash: string | null;
  events: PaymentEventName[];
  stamps: Partial<Record<'acceptedAt' | 'succeededAt' | 'cancelledAt', string>>;
  incidents: Array<{ kind: string; amountAtomic: string; transferKey: string | null }>;
  transferStatuses: Array<{ key: string; status: string; role?: string }>;
  ledger: Array<'collection' | 'settlement'>;
  cancel: { reasonCode: string; reason: string | null } | null;
  failure: { code: string; message: string } | null;
  /** Workflow time of the step: with the statusVersion it identifies the step (row ids derive from it). */
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
    at,
  };
}
