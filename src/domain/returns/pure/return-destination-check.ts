/**
 * The signer's own check of a fund return's destination and amount, made before anything is signed
 * (see docs/decisions/refunds-and-recoveries.md, "The signer checks the destination itself"). The
 * row's destination and amount are not trusted: code that can write fund_returns must not be able to
 * pay itself, nor a payer more than the books owe it.
 * Pure: the worker reads the facts fresh (the payers from the recorded funding transfers, the approval
 * row, the incident, the other returns) and this decides.
 */
import { decideRefundAmount, holdsAmount, isRefundable } from './return-amounts';

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

export type DestinationVia = 'payer' | 'approval';
export type DestinationVerdict = { ok: true; via: DestinationVia } | { ok: false; reason: DestinationRefusal };

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

export const AMOUNT_REFUSALS = [
  /** More than the books leave to return to this destination. */
  'amount_exceeds_books',
  /** Another chain or token than the one the books hold the money in. */
  'asset_not_in_books',
  /** A refund paid from another vault than the Payment's recipient's (the key that signs is the row's vault's). */
  'source_not_in_books',
] as const;
export type AmountRefusal = (typeof AMOUNT_REFUSALS)[number];

/** The return as the row states it, with what it would send. */
export interface AmountToCheck extends ReturnToCheck {
  amountAtomic: bigint;
  chainId: number;
  tokenAddress: string;
  /** The vault a refund is paid from (its key signs); a recovery pays from the Payment's escrow. */
  vaultId: string | null;
}

/** A fund return as the signer reads it, to count what it holds. */
export interface ReturnHolding {
  id: string;
  kind: string;
  incidentId: string | null;
  toAddress: string;
  status: string;
  amountAtomic: bigint;
}

export interface AmountFacts {
  paymentIntent: string;
  paymentStatus: string;
  paymentAmountAtomic: bigint;
  /** Each payer's share, from the Payment's confirmed funding transfers (payerShares). */
  shares: ReadonlyArray<{ address: string; amountAtomic: bigint }>;
  /** The incident the return names, if it is this Payment's; null otherwise. */
  incident: { amountAtomic: bigint } | null;
  /** Where the books hold the money: the Payment's chain and token, or its incident's. */
  asset: { chainId: number; tokenAddress: string };
  /** The Payment's recipient's vault, which alone pays its refunds; null: it has none. */
  recipientVaultId: string | null;
  /** The Payment's returns as read now; the one checked is left out by id (a retry is not its own rival). */
  returns: readonly ReturnHolding[];
  /** The approval the destination passed under (via 'approval'); its params.amountAtomic caps the amount. */
  approval: ApprovalFacts | null;
}

/** allowedAtomic: what the books leave to this destination now (for the operator who looks). */
export type AmountVerdict = { ok: true; allowedAtomic: bigint } | { ok: false; reason: AmountRefusal; allowedAtomic: bigint };

const sum = (rows: readonly ReturnHolding[]) => rows.reduce((acc, x) => acc + x.amountAtomic, 0n);
const atLeastZero = (n: bigint) => (n > 0n ? n : 0n);

/**
 * The approval's cap: none when it records no amount; an amount it records in any form but atomic
 * digits caps at zero, since the signer can't tell what was approved.
 */
function approvedCap(approval: ApprovalFacts | null): bigint | null {
  const atomic = param(approval?.params, 'amountAtomic');
  if (atomic === undefined) return param(approval?.params, 'amount') === undefined ? null : 0n;
  if (typeof atomic === 'string' && /^\d{1,78}$/.test(atomic)) return BigInt(atomic);
  return 0n;
}

/**
 * A refund: to a payer, the create's rule (decideRefundAmount) over that payer's share; elsewhere
 * under an approval, the Payment's rest, capped by the approval's amount if it records one.
 */
function refundAllowed(r: AmountToCheck, via: DestinationVia, f: AmountFacts): bigint {
  if (!isRefundable(f.paymentIntent, f.paymentStatus)) return 0n;
  const held = f.returns.filter((x) => x.id !== r.id && x.kind === 'refund' && holdsAmount(x.status));
  const toPayer = via === 'payer';
  const decided = decideRefundAmount({
    paymentAmountAtomic: f.paymentAmountAtomic,
    heldAtomic: sum(held),
    requestedAtomic: null,
    payerShareAtomic: toPayer
      ? (f.shares.find((x) => same(x.address, r.toAddress))?.amountAtomic ?? 0n)
      : (approvedCap(f.approval) ?? f.paymentAmountAtomic),
    payerHeldAtomic: toPayer ? sum(held.filter((x) => same(x.toAddress, r.toAddress))) : 0n,
  });
  return decided.ok ? decided.amountAtomic : 0n;
}

/** A recovery: the incident's amount less its other returns that hold theirs, capped by an approval's amount. */
function recoveryAllowed(r: AmountToCheck, via: DestinationVia, f: AmountFacts): bigint {
  if (f.incident === null || r.incidentId === null) return 0n;
  const held = f.returns.filter((x) => x.id !== r.id && x.incidentId === r.incidentId && holdsAmount(x.status));
  const rest = atLeastZero(f.incident.amountAtomic - sum(held));
  const cap = via === 'approval' ? approvedCap(f.approval) : null;
  return cap !== null && cap < rest ? cap : rest;
}

/**
 * Whether the signer may send this amount, once the destination passed (`via`): in the asset the
 * books hold, a refund from the recipient's own vault, and no more than they leave to it with every other return that holds its amount counted.
 */
export function checkReturnAmount(r: AmountToCheck, via: DestinationVia, f: AmountFacts): AmountVerdict {
  if (r.chainId !== f.asset.chainId || !same(r.tokenAddress, f.asset.tokenAddress))
    return { ok: false, reason: 'asset_not_in_books', allowedAtomic: 0n };
  if (r.kind === 'refund' && (r.vaultId === null || r.vaultId !== f.recipientVaultId))
    return { ok: false, reason: 'source_not_in_books', allowedAtomic: 0n };
  const allowed = r.kind === 'refund' ? refundAllowed(r, via, f) : recoveryAllowed(r, via, f);
  if (r.amountAtomic > 0n && r.amountAtomic <= allowed) return { ok: true, allowedAtomic: allowed };
  return { ok: false, reason: 'amount_exceeds_books', allowedAtomic: allowed };
}
