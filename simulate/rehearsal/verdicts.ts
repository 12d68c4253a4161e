/**
 * The rehearsal's verdicts, as pure functions of what it planned and what it observed (the database,
 * the chains, the receivers, the provider's own records, the partner's answers): each answers the
 * failures it finds, so a test can plant a fault in the observations and see the check fail.
 * simulate/rehearsal/checks.ts gathers the observations; this file only judges them.
 */

/** What the load meant a Payment to end as. */
export type PaymentPlan = 'paid_in_full' | 'underpaid' | 'overpaid' | 'expire' | 'cancel';

export interface PlannedPayment {
  id: string;
  plan: PaymentPlan;
  flow: string;
  /** What the payer sent in all (0 for expire and cancel). */
  paidAtomic: bigint;
  /** What the Payment asked for. */
  amountAtomic: bigint;
}

export interface ObservedPayment {
  id: string;
  status: string;
  held: boolean;
  reason: string | null;
  merchantNetAtomic: bigint;
  /** What the settlement transaction moved to the recipient, read from its receipt (null: no settlement transaction). */
  settledOnChainAtomic: bigint | null;
  incidents: Array<{ kind: string; amountAtomic: bigint }>;
  /** Each incident recovery: its status and what its transaction moved on chain (null: none found). */
  recoveries: Array<{ status: string; amountAtomic: bigint; onChainAtomic: bigint | null }>;
}

interface Expectation {
  status: string;
  incident?: { kind: string; amountAtomic: (p: PlannedPayment) => bigint };
}

const EXPECT: Record<PaymentPlan, Expectation> = {
  paid_in_full: { status: 'succeeded' },
  underpaid: { status: 'expired', incident: { kind: 'underpaid_expired', amountAtomic: (p) => p.paidAtomic } },
  overpaid: { status: 'succeeded', incident: { kind: 'excess', amountAtomic: (p) => p.paidAtomic - p.amountAtomic } },
  expire: { status: 'expired' },
  cancel: { status: 'cancelled' },
};

/** Every planned Payment ended as planned: its status, its incident, its settlement and recovery to the unit on chain. */
export function paymentVerdicts(planned: PlannedPayment[], observed: Map<string, ObservedPayment>): string[] {
  return planned.flatMap((p) => {
    const o = observed.get(p.id);
    const label = `Payment ${p.id} (${p.flow}, ${p.plan})`;
    if (!o) return [`${label}: not found`];
    if (o.held) return [`${label}: held (${o.reason ?? 'no reason'}), and no hold was planned`];
    return [...statusVerdict(label, p, o), ...settlementVerdict(label, o), ...incidentVerdicts(label, p, o)];
  });
}

function statusVerdict(label: string, p: PlannedPayment, o: ObservedPayment): string[] {
  const want = EXPECT[p.plan].status;
  return o.status === want ? [] : [`${label}: ${o.status}, planned ${want}`];
}

/** A succeeded Payment's recipient got its net on chain; nothing else was settled. */
function settlementVerdict(label: string, o: ObservedPayment): string[] {
  if (o.status !== 'succeeded')
    return o.settledOnChainAtomic ? [`${label}: ${o.status}, yet settled ${o.settledOnChainAtomic} on chain`] : [];
  if (o.settledOnChainAtomic === null) return [`${label}: succeeded without a settlement transaction`];
  return o.settledOnChainAtomic === o.merchantNetAtomic
    ? []
    : [`${label}: the settlement moved ${o.settledOnChainAtomic} to the recipient on chain, its net is ${o.merchantNetAtomic}`];
}

function incidentVerdicts(label: string, p: PlannedPayment, o: ObservedPayment): string[] {
  const want = EXPECT[p.plan].incident;
  const got = o.incidents.map((i) => `${i.kind}:${i.amountAtomic}`).sort();
  const expected = want ? [`${want.kind}:${want.amountAtomic(p)}`] : [];
  if (got.join(',') !== expected.join(',')) return [`${label}: incidents [${got.join(', ')}], planned [${expected.join(', ')}]`];
  if (!want) return [];
  const amount = want.amountAtomic(p);
  const confirmed = o.recoveries.filter((r) => r.status === 'confirmed');
  if (confirmed.length !== 1) return [`${label}: ${confirmed.length} confirmed recoveries of its incident, planned 1`];
  const r = confirmed[0]!;
  if (r.amountAtomic !== amount || r.onChainAtomic !== amount)
    return [`${label}: recovered ${r.amountAtomic} (${r.onChainAtomic ?? 'nothing'} on chain), its incident holds ${amount}`];
  return [];
}

/** A transfer the load sent to a deposit address. */
export interface PlannedDeposit {
  txHash: string;
  amountAtomic: bigint;
}

export interface ObservedDeposit {
  id: string;
  status: string;
  amountAtomic: bigint;
  netAtomic: bigint;
  /** What its net leg moved to the destination, read from the transaction's receipt (null: no confirmed net leg). */
  settledOnChainAtomic: bigint | null;
}

/** Every transfer to a deposit address became one deposit of its amount, settled, its net moved to the unit on chain. */
export function depositVerdicts(planned: PlannedDeposit[], observed: Map<string, ObservedDeposit[]>): string[] {
  return planned.flatMap((p) => {
    const found = observed.get(p.txHash.toLowerCase()) ?? [];
    const label = `the deposit of ${p.amountAtomic} in ${p.txHash}`;
    if (found.length !== 1) return [`${label}: ${found.length} deposits recorded, planned 1`];
    const d = found[0]!;
    if (d.amountAtomic !== p.amountAtomic) return [`${label}: recorded as ${d.amountAtomic} (${d.id})`];
    if (d.status !== 'settled') return [`${label}: ${d.status} (${d.id}), planned settled`];
    return d.settledOnChainAtomic === d.netAtomic
      ? []
      : [`${label}: its settlement moved ${d.settledOnChainAtomic ?? 'nothing'} on chain, its net is ${d.netAtomic} (${d.id})`];
  });
}

/** An item held for an operator that no scenario planned. */
export interface Hold {
  what: string;
  reason: string | null;
}

/** Whatever is still held at the end: a planned hold was released by the operator, so none was planned. */
export function holdVerdicts(held: Hold[]): string[] {
  return held.map((h) => `${h.what} held requires_intervention (${h.reason ?? 'no reason'}), unplanned`);
}

/** A hold a scenario planned, and the operator's release of it through the CLI. */
export interface ReleasedHold {
  kind: 'payment' | 'deposit';
  id: string;
  reason: string | null;
  /** Why the CLI could not release it (undefined: released). */
  error?: string;
}

/** What a released item must end as: a Payment as its plan says (paymentVerdicts), a deposit settled. */
const RELEASED_DEPOSIT_ENDS = 'settled';

/**
 * The planned holds: at least one came (a drill that holds nothing tests nothing), each was released
 * by the operator, and each released deposit then settled.
 */
export function releasedHoldVerdicts(released: ReleasedHold[], depositStatus: Map<string, string>): string[] {
  if (released.length === 0) return ['no planned hold came: the treasury drill held nothing for the operator to release'];
  return released.flatMap((r) => {
    const what = `${r.kind === 'payment' ? 'Payment' : 'deposit'} ${r.id} (planned hold, ${r.reason ?? 'no reason'})`;
    if (r.error) return [`${what}: the operator's release failed: ${r.error}`];
    if (r.kind !== 'deposit') return [];
    const status = depositStatus.get(r.id);
    return status === RELEASED_DEPOSIT_ENDS ? [] : [`${what}: released, then ${status ?? 'not found'}, planned ${RELEASED_DEPOSIT_ENDS}`];
  });
}

/** A stretch of time a fault took something away: from its kill until the part was back. */
export interface Window {
  part: string;
  at: number;
  backAt: number;
  /** When the service showed it had caught up with what the fault left queued: the next Payment succeeded. */
  recoveredAt?: number;
}

/** A delivery the worker made just before a fault may have been made again: its attempt's timeout ahead of the kill. */
export const INTERRUPT_LEAD_MS = 15_000;

export interface EventObservations {
  /** Every committed event of the endpoint's app. */
  committed: Array<{ id: string; name: string }>;
  /** Verified deliveries at the endpoint, in order. */
  receipts: Array<{ id: string; at: number }>;
}

/**
 * Each committed event delivered and verified; more than one delivery of an event only when its first
 * came during a fault (the delivery was interrupted before the worker recorded it).
 */
export function eventVerdicts(endpoint: string, o: EventObservations, windows: Window[]): { failures: string[]; duplicates: number } {
  const firstAt = new Map<string, number>();
  const count = new Map<string, number>();
  for (const r of o.receipts) {
    if (!firstAt.has(r.id)) firstAt.set(r.id, r.at);
    count.set(r.id, (count.get(r.id) ?? 0) + 1);
  }
  const failures: string[] = [];
  let duplicates = 0;
  for (const e of o.committed) {
    const n = count.get(e.id) ?? 0;
    if (n === 0) failures.push(`event ${e.id} (${e.name}) never delivered to the ${endpoint} endpoint`);
    if (n <= 1) continue;
    duplicates += n - 1;
    const at = firstAt.get(e.id)!;
    const fault = windows.some((w) => at >= w.at - INTERRUPT_LEAD_MS && at <= w.backAt);
    if (!fault)
      failures.push(`event ${e.id} (${e.name}) delivered ${n} times to the ${endpoint} endpoint, no fault interrupting its first`);
  }
  return { failures, duplicates };
}

export interface ServicePayout {
  paymentId: string;
  payoutId: string | null;
  sourceAtomic: bigint;
}

export interface ProviderPayout {
  payoutId: string;
  paymentId: string;
  amountAtomic: bigint;
}

/** Every bank payout the service made is one payout in the provider's own records, same amount; the provider made no other. */
export function payoutVerdicts(service: ServicePayout[], provider: ProviderPayout[]): string[] {
  const failures: string[] = [];
  const byPayment = new Map<string, ProviderPayout[]>();
  for (const p of provider) byPayment.set(p.paymentId, [...(byPayment.get(p.paymentId) ?? []), p]);
  const ours = new Set(service.map((s) => s.paymentId));
  for (const s of service) {
    const theirs = byPayment.get(s.paymentId) ?? [];
    if (theirs.length !== 1) {
      failures.push(`payout of Payment ${s.paymentId}: ${theirs.length} payouts in the provider's records, expected 1`);
      continue;
    }
    const t = theirs[0]!;
    if (s.payoutId !== t.payoutId)
      failures.push(`payout of Payment ${s.paymentId}: the service records ${s.payoutId}, the provider ${t.payoutId}`);
    if (s.sourceAtomic !== t.amountAtomic)
      failures.push(`payout of Payment ${s.paymentId}: the service sent ${s.sourceAtomic}, the provider paid out ${t.amountAtomic}`);
  }
  for (const p of provider)
    if (!ours.has(p.paymentId)) failures.push(`provider payout ${p.payoutId} (Payment ${p.paymentId}) the service never made`);
  return failures;
}

export interface Unavailable {
  op: string;
  sentAt: number;
  at: number;
}

/**
 * A 503 only while a fault's effect lasted: the request's time overlaps the fault's window, from the
 * kill until the part was back or, if later, until the service had caught up with the work the fault
 * left queued (its next Payment succeeded, itself bounded by BOUNDS.paymentMs). Meanwhile an update
 * a workflow can't answer within its deadline is the contract's 503 with Retry-After.
 */
export function unavailableVerdicts(answers: Unavailable[], windows: Window[]): string[] {
  const endOf = (w: Window) => Math.max(w.backAt, w.recoveredAt ?? w.backAt);
  return answers
    .filter((u) => !windows.some((w) => u.sentAt <= endOf(w) && u.at >= w.at))
    .map(
      (u) => `${u.op} answered 503 at ${new Date(u.at).toISOString()} (sent ${u.at - u.sentAt} ms before), outside every fault's window`,
    );
}

export interface Outage {
  part: string;
  what: string;
  at: number;
  /** When the part was back (unset: it never came back). */
  backAt?: number;
  /** When the first Payment created after the kill succeeded (unset: none did). */
  paymentAt?: number;
  error?: string;
}

/** How long a part may take to come back, and the next Payment to succeed, after its kill (docs/decisions/testing-and-tooling.md). */
export const BOUNDS = { backMs: 60_000, paymentMs: 180_000 };

/** Every part was killed at least once, came back, and the next Payment succeeded, each within its bound. */
export function outageVerdicts(outages: Outage[], parts: readonly string[], bounds = BOUNDS): string[] {
  const failures = parts.filter((p) => !outages.some((o) => o.part === p)).map((p) => `${p} was never killed`);
  for (const o of outages) {
    if (o.error) failures.push(`${o.what}: ${o.error}`);
    if (o.backAt === undefined) failures.push(`${o.what}: never came back`);
    else if (o.backAt - o.at > bounds.backMs) failures.push(`${o.what}: back after ${o.backAt - o.at} ms, bound ${bounds.backMs} ms`);
    if (o.paymentAt === undefined) failures.push(`${o.what}: no Payment succeeded after it`);
    else if (o.paymentAt - o.at > bounds.paymentMs)
      failures.push(`${o.what}: the next Payment succeeded ${o.paymentAt - o.at} ms after it, bound ${bounds.paymentMs} ms`);
  }
  return failures;
}
