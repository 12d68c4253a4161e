/**
 * The linked bank account's lifecycle, as one pure function (no I/O): state + event -> what changes.
 *
 *   pending_verification --verified--> verified --disable--> disabled
 *   pending_verification --verification_failed--> verification_failed --disable--> disabled
 *   pending_verification --disable--> disabled
 *
 * The same event on the state it led to changes nothing (a repeated provider callback, a repeated
 * disable). Any other pair is refused: a late "verified" after a failure or a disable never revives
 * an account. Every change moves statusVersion up by one; a verification outcome also moves
 * verification.version up by one.
 */
export const BANK_ACCOUNT_STATUSES = ['pending_verification', 'verified', 'verification_failed', 'disabled'] as const;
export type BankAccountStatus = (typeof BANK_ACCOUNT_STATUSES)[number];

export interface BankAccountState {
  status: BankAccountStatus;
  statusVersion: number;
  verificationVersion: number;
  verifiedAt: Date | null;
  disabledAt: Date | null;
  failureReason: string | null;
}

export type BankAccountEvent =
  { type: 'verified'; at: Date } | { type: 'verification_failed'; at: Date; reason: string | null } | { type: 'disable'; at: Date };

export type BankAccountDecision =
  { kind: 'changed'; state: BankAccountState } | { kind: 'unchanged' } | { kind: 'refused'; reason: string };

const TARGET: Record<BankAccountEvent['type'], BankAccountStatus> = {
  verified: 'verified',
  verification_failed: 'verification_failed',
  disable: 'disabled',
};

const ALLOWED_FROM: Record<BankAccountEvent['type'], readonly BankAccountStatus[]> = {
  verified: ['pending_verification'],
  verification_failed: ['pending_verification'],
  disable: ['pending_verification', 'verified', 'verification_failed'],
};

export function decideBankAccount(state: BankAccountState, event: BankAccountEvent): BankAccountDecision {
  const to = TARGET[event.type];
  if (state.status === to) return { kind: 'unchanged' };
  if (!ALLOWED_FROM[event.type].includes(state.status)) {
    return { kind: 'refused', reason: `a bank account in status ${state.status} can't take ${event.type}` };
  }
  const next: BankAccountState = { ...state, status: to, statusVersion: state.statusVersion + 1 };
  switch (event.type) {
    case 'verified':
      return {
        kind: 'changed',
        state: { ...next, verificationVersion: state.verificationVersion + 1, verifiedAt: event.at, failureReason: null },
      };
    case 'verification_failed':
      return { kind: 'changed', state: { ...next, verificationVersion: state.verificationVersion + 1, failureReason: event.reason } };
    case 'disable':
      return { kind: 'changed', state: { ...next, disabledAt: event.at } };
  }
}

export function initialBankAccountState(): BankAccountState {
  return {
    status: 'pending_verification',
    statusVersion: 1,
    verificationVersion: 1,
    verifiedAt: null,
    disabledAt: null,
    failureReason: null,
  };
}
