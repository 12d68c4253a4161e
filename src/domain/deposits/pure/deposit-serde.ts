/**
 * JSON-safe forms of the deposit machine's state and transitions (amounts as decimal strings), for
 * workflow <-> activity payloads. Pure: the DepositWorkflow imports this file.
 */
import type { DepositEventName, DepositLedgerLeg, DepositState, DepositStatus, SettlementStatus, Transition } from './deposit-machine';

export interface PersistedDepositState {
  status: DepositStatus;
  statusVersion: number;
  amountAtomic: string;
  fees: { platformAtomic: string; partnerAtomic: string; networkAtomic: string; setupAtomic: string; netAtomic: string };
  settlement: { status: SettlementStatus; txHash: string | null; settledAt: string | null; reasonCode: string | null };
  settlementAttempts: number;
  actualReceivedAtomic: string | null;
  failureReason: string | null;
  reversedAt: string | null;
}

/** One transition as one activity persists it, in one database transaction. */
export interface PersistedDepositTransition {
  fromStatusVersion: number;
  state: PersistedDepositState;
  events: DepositEventName[];
  ledger: DepositLedgerLeg[];
  /** Workflow time of the step (event timestamps). */
  at: string;
}

export function toPersistedState(s: DepositState): PersistedDepositState {
  return {
    status: s.status,
    statusVersion: s.statusVersion,
    amountAtomic: s.amountAtomic.toString(),
    fees: {
      platformAtomic: s.fees.platformAtomic.toString(),
      partnerAtomic: s.fees.partnerAtomic.toString(),
      networkAtomic: s.fees.networkAtomic.toString(),
      setupAtomic: s.fees.setupAtomic.toString(),
      netAtomic: s.fees.netAtomic.toString(),
    },
    settlement: { ...s.settlement },
    settlementAttempts: s.settlementAttempts,
    actualReceivedAtomic: s.actualReceivedAtomic === null ? null : s.actualReceivedAtomic.toString(),
    failureReason: s.failureReason,
    reversedAt: s.reversedAt,
  };
}

export function fromPersistedState(p: PersistedDepositState): DepositState {
  return {
    status: p.status,
    statusVersion: p.statusVersion,
    amountAtomic: BigInt(p.amountAtomic),
    fees: {
      platformAtomic: BigInt(p.fees.platformAtomic),
      partnerAtomic: BigInt(p.fees.partnerAtomic),
      networkAtomic: BigInt(p.fees.networkAtomic),
      setupAtomic: BigInt(p.fees.setupAtomic),
      netAtomic: BigInt(p.fees.netAtomic),
    },
    settlement: { ...p.settlement },
    settlementAttempts: p.settlementAttempts,
    actualReceivedAtomic: p.actualReceivedAtomic === null ? null : BigInt(p.actualReceivedAtomic),
    failureReason: p.failureReason,
    reversedAt: p.reversedAt,
  };
}

export function toPersistedTransition(t: Transition, at: string): PersistedDepositTransition {
  return { fromStatusVersion: t.fromStatusVersion, state: toPersistedState(t.state), events: [...t.events], ledger: [...t.ledger], at };
}
