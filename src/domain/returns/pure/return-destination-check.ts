/**
 * The signer's own check of a fund return's destination, made before anything is signed (see
 * docs/decisions/refunds-and-recoveries.md, "The signer checks the destination itself"). The row's
 * destination is not trusted: code that can write fund_returns must not be able to pay itself.
 * Pure: the worker reads the facts fresh (the payers from the recorded funding transfers, the approval
 * row) and this decides.
 */

/** The return as the row states it; nothing here is trusted but compared. */
export interface ReturnToCheck {
  id: string;
  kind: 'refund' | 'incident_recovery';
  paymentId: string;
  incidentId: string | null;
  toAddress: string;
  approvalId: string | null;
}

/** An operator_approvals row as the signer reads it. */
export interface ApprovalFacts {
  id: string;
  action: string;
  targetType: string;
  targetId: string;
  params: unknown;
  status: string;
  requestedBy: string;
  decidedBy: string | null;
  resultId: string | null;
}

export interface DestinationFacts {
  /** Whose money it is, derived from the books and the chain (lowercase or not: compared without case). */
  payers: readonly string[];
  /** The approval the row names, as read now; null when it names none or none exists. */
  approval: ApprovalFacts | null;
}

export const DESTINATION_REFUSALS = [
  /** Not a payer, and no approval named. */
  'destination_not_approved',
  /** The approval named does not exist. */
  'approval_not_found',
  /** The approval is pending, rejected or expired. */
  'approval_not_approved',
  /** One operator both asked and approved. */
  'approval_same_operator',
  /** The approval is for another action, Payment or incident. */
  'approval_other_target',
  /** The approval names another destination. */
  'approval_other_destination',
  /** The approval already paid another return. */
  'approval_used',
] as const;
export type DestinationRefusal = (typeof DESTINATION_REFUSALS)[number];

export type DestinationVerdict = { ok: true; via: 'payer' | 'approval' } | { ok: false; reason: DestinationRefusal };

/** The approval action that may send each kind of return elsewhere than its payer. */
export const APPROVAL_ACTION_OF: Record<ReturnToCheck['kind'], string> = {
  incident_recovery: 'recover-incident',
  refund: 'refund',
};

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

function param(params: unknown, key: string): unknown {
  return params !== null && typeof params === 'object' && !Array.isArray(params) ? (params as Record<string, unknown>)[key] : undefined;
}

/** Why the approval does not let this return go where it says, or null when it does. */
function approvalRefusal(r: ReturnToCheck, a: ApprovalFacts): DestinationRefusal | null {
  if (a.status !== 'approved') return 'approval_not_approved';
  // Two people: a decider who is not the requester, however either is spelled.
  const operator = (who: string) => who.trim().toLowerCase();
  if (a.decidedBy === null || operator(a.decidedBy) === '' || operator(a.decidedBy) === operator(a.requestedBy))
    return 'approval_same_operator';
  const incident = param(a.params, 'incidentId');
  if (
    a.action !== APPROVAL_ACTION_OF[r.kind] ||
    a.targetType !== 'payment' ||
    a.targetId !== r.paymentId ||
    (r.incidentId !== null && incident !== r.incidentId)
  )
    return 'approval_other_target';
  const destination = param(a.params, 'destinationAddress');
  if (typeof destination !== 'string' || !same(destination, r.toAddress)) return 'approval_other_destination';
  if (a.resultId !== null && a.resultId !== r.id) return 'approval_used';
  return null;
}

/**
 * Whether the signer may pay this return: to one of the payers, or elsewhere only under the approval
 * the row names, approved by another operator than the one who asked, for this Payment (and incident)
 * and this destination.
 */
export function checkReturnDestination(r: ReturnToCheck, facts: DestinationFacts): DestinationVerdict {
  if (facts.payers.some((p) => same(p, r.toAddress))) return { ok: true, via: 'payer' };
  if (r.approvalId === null) return { ok: false, reason: 'destination_not_approved' };
  if (facts.approval === null || facts.approval.id !== r.approvalId) return { ok: false, reason: 'approval_not_found' };
  const refused = approvalRefusal(r, facts.approval);
  return refused ? { ok: false, reason: refused } : { ok: true, via: 'approval' };
}
