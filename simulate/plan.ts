import { createHash } from 'node:crypto';
import { streamOf, type Rng } from './prng';

/**
 * The simulation's plan: a pure function of (seed, payments, deposits). Everything random about a run
 * is decided here (scenarios, amounts, when each thing starts, which transfers share a block, which
 * faults strike when), so a seed replays the same plan. What the plan cannot fix is timing: a fault
 * lands on whatever happens to be in flight at that moment.
 */

export const SCENARIOS = [
  'exact',
  'partial_complete',
  'excess',
  'duplicate',
  'underpaid_expired',
  'late',
  'cancelled',
  'expired_unpaid',
] as const;
export type Scenario = (typeof SCENARIOS)[number];

export type PaymentStatus = 'succeeded' | 'expired' | 'cancelled';
export type IncidentKind = 'excess' | 'duplicate' | 'underpaid_expired' | 'late';

/** When a transfer is sent: at creation, or once the partner sees the Payment in a given state. */
export type SendWhen = 'created' | 'seen' | 'accepted' | 'expired';

export interface PlannedTransfer {
  amountAtomic: bigint;
  when: SendWhen;
}

export interface PaymentPlan {
  index: number;
  scenario: Scenario;
  account: number;
  amountAtomic: bigint;
  expiresInSeconds: number;
  /** After the start of traffic. */
  startAtMs: number;
  transfers: PlannedTransfer[];
  /** The cancel request goes this long after the create answer (cancelled only). */
  cancelAfterMs: number | null;
  expect: { status: PaymentStatus; incidents: Array<{ kind: IncidentKind; amountAtomic: bigint }> };
}

export interface DepositPlan {
  index: number;
  account: number;
  amountAtomic: bigint;
  startAtMs: number;
}

export type FaultPlan =
  | { atMs: number; kind: 'worker_kill'; downMs: number }
  | { atMs: number; kind: 'reorg'; depth: number }
  | { atMs: number; kind: 'mining_pause'; pauseMs: number; mineBlocks: number }
  | { atMs: number; kind: 'postgres_pause'; pauseMs: number }
  | { atMs: number; kind: 'temporal_pause'; pauseMs: number }
  /** A busy hour: the base fee held at `gwei` (far under the 500 gwei cap) for `holdMs`. */
  | { atMs: number; kind: 'fee_spike'; gwei: number; holdMs: number };

export type FaultKind = FaultPlan['kind'];

/** A transfer sent at creation: a Payment's first one, or a deposit. */
export interface BurstMember {
  kind: 'payment' | 'deposit';
  index: number;
}

export interface Plan {
  seed: number;
  accounts: number;
  payments: PaymentPlan[];
  deposits: DepositPlan[];
  /** Each burst's transfers are mined together, in one block. */
  bursts: BurstMember[][];
  faults: FaultPlan[];
  trafficMs: number;
  /** sha256 of the plan: two runs with the same digest ran the same plan. */
  digest: string;
}

export const USDC = 1_000_000n; // atomic units per USDC (6 decimals)
/** The shortest expiry the API accepts; Payments meant to expire use it (the run is in real time). */
export const SHORT_EXPIRY_SECONDS = 60;
/** Payments that must not expire during a run. */
export const LONG_EXPIRY_SECONDS = 3600;
/** Time between consecutive starts of a Payment or deposit (on average). */
const SPACING_MS = 400;

/** An amount in [min, max] that looks like what people send: whole, cents, or all six decimals. */
function amount(rng: Rng, min: bigint, max: bigint): bigint {
  const raw = rng.bigint(min, max);
  const style = rng.int(0, 9);
  const unit = style < 3 ? USDC : style < 6 ? 10_000n : 1n;
  const rounded = (raw / unit) * unit;
  return rounded < min ? min : rounded;
}

function planPayment(rng: Rng, index: number, scenario: Scenario, accounts: number, startAtMs: number): PaymentPlan {
  const account = rng.int(0, accounts - 1);
  const base = { index, scenario, account, startAtMs, cancelAfterMs: null as number | null };
  const long = LONG_EXPIRY_SECONDS;
  const short = SHORT_EXPIRY_SECONDS;
  // Every transfer that must count is at least the 1 USDC minimum (smaller ones are dust).
  switch (scenario) {
    case 'exact': {
      const a = amount(rng, USDC, 500n * USDC);
      return {
        ...base,
        amountAtomic: a,
        expiresInSeconds: long,
        transfers: [{ amountAtomic: a, when: 'created' }],
        expect: { status: 'succeeded', incidents: [] },
      };
    }
    case 'partial_complete': {
      const a = amount(rng, 2n * USDC, 500n * USDC);
      const first = amount(rng, USDC, a - USDC);
      return {
        ...base,
        amountAtomic: a,
        expiresInSeconds: long,
        transfers: [
          { amountAtomic: first, when: 'created' },
          { amountAtomic: a - first, when: 'seen' },
        ],
        expect: { status: 'succeeded', incidents: [] },
      };
    }
    case 'excess': {
      const a = amount(rng, USDC, 500n * USDC);
      const extra = amount(rng, 1n, 50n * USDC);
      return {
        ...base,
        amountAtomic: a,
        expiresInSeconds: long,
        transfers: [{ amountAtomic: a + extra, when: 'created' }],
        expect: { status: 'succeeded', incidents: [{ kind: 'excess', amountAtomic: extra }] },
      };
    }
    case 'duplicate': {
      const a = amount(rng, USDC, 500n * USDC);
      return {
        ...base,
        amountAtomic: a,
        expiresInSeconds: long,
        // The second is a duplicate only once the first was accepted; sent together, it would be excess.
        transfers: [
          { amountAtomic: a, when: 'created' },
          { amountAtomic: a, when: 'accepted' },
        ],
        expect: { status: 'succeeded', incidents: [{ kind: 'duplicate', amountAtomic: a }] },
      };
    }
    case 'underpaid_expired': {
      const a = amount(rng, 2n * USDC, 500n * USDC);
      const first = amount(rng, USDC, a - 1n);
      return {
        ...base,
        amountAtomic: a,
        expiresInSeconds: short,
        transfers: [{ amountAtomic: first, when: 'created' }],
        expect: { status: 'expired', incidents: [{ kind: 'underpaid_expired', amountAtomic: first }] },
      };
    }
    case 'late': {
      const a = amount(rng, USDC, 500n * USDC);
      return {
        ...base,
        amountAtomic: a,
        expiresInSeconds: short,
        transfers: [{ amountAtomic: a, when: 'expired' }],
        expect: { status: 'expired', incidents: [{ kind: 'late', amountAtomic: a }] },
      };
    }
    case 'cancelled': {
      const a = amount(rng, USDC, 500n * USDC);
      return {
        ...base,
        amountAtomic: a,
        expiresInSeconds: long,
        transfers: [],
        cancelAfterMs: rng.int(0, 2000),
        expect: { status: 'cancelled', incidents: [] },
      };
    }
    case 'expired_unpaid': {
      const a = amount(rng, USDC, 500n * USDC);
      return { ...base, amountAtomic: a, expiresInSeconds: short, transfers: [], expect: { status: 'expired', incidents: [] } };
    }
  }
}

/** Base fees of a busy hour on Ethereum, each far under the default 500 gwei cap: money must keep moving. */
const FEE_SPIKE_GWEI = [40, 80, 150];

function scheduleFaults(rng: Rng, payments: number, windowMs: number): FaultPlan[] {
  const counts: Record<FaultKind, number> = {
    worker_kill: 1 + Math.floor(payments / 150),
    reorg: 1 + Math.floor(payments / 60),
    mining_pause: 1 + Math.floor(payments / 100),
    postgres_pause: 1 + Math.floor(payments / 200),
    temporal_pause: 1 + Math.floor(payments / 200),
    fee_spike: 1 + Math.floor(payments / 250),
  };
  const at = () => rng.int(Math.round(windowMs * 0.05), Math.round(windowMs * 0.85));
  const faults: FaultPlan[] = [];
  for (let i = 0; i < counts.worker_kill; i += 1) faults.push({ atMs: at(), kind: 'worker_kill', downMs: rng.int(500, 3000) });
  for (let i = 0; i < counts.reorg; i += 1) faults.push({ atMs: at(), kind: 'reorg', depth: rng.int(1, 3) });
  for (let i = 0; i < counts.mining_pause; i += 1)
    faults.push({ atMs: at(), kind: 'mining_pause', pauseMs: rng.int(2000, 6000), mineBlocks: rng.int(1, 4) });
  for (let i = 0; i < counts.postgres_pause; i += 1) faults.push({ atMs: at(), kind: 'postgres_pause', pauseMs: rng.int(1500, 3500) });
  for (let i = 0; i < counts.temporal_pause; i += 1) faults.push({ atMs: at(), kind: 'temporal_pause', pauseMs: rng.int(1500, 3500) });
  for (let i = 0; i < counts.fee_spike; i += 1)
    faults.push({
      atMs: at(),
      kind: 'fee_spike',
      gwei: FEE_SPIKE_GWEI[rng.int(0, FEE_SPIKE_GWEI.length - 1)]!,
      holdMs: rng.int(20_000, 60_000),
    });
  return faults.sort((a, b) => a.atMs - b.atMs);
}

/** Groups of 2-6 transfers sent at creation, neighbours in time, that go into one block. */
function planBursts(rng: Rng, payments: PaymentPlan[], deposits: DepositPlan[]): BurstMember[][] {
  const candidates: Array<BurstMember & { at: number }> = [
    ...payments
      .filter((p) => p.transfers[0]?.when === 'created')
      .map((p) => ({ kind: 'payment' as const, index: p.index, at: p.startAtMs })),
    ...deposits.map((d) => ({ kind: 'deposit' as const, index: d.index, at: d.startAtMs })),
  ].sort((a, b) => a.at - b.at || a.index - b.index);
  const wanted = 1 + Math.floor(candidates.length / 25);
  const taken = new Set<number>();
  const bursts: BurstMember[][] = [];
  for (let tries = 0; bursts.length < wanted && tries < wanted * 10; tries += 1) {
    const size = rng.int(2, 6);
    const start = rng.int(0, Math.max(0, candidates.length - size));
    const group = candidates.slice(start, start + size);
    if (group.length < 2 || group.some((_, i) => taken.has(start + i))) continue;
    group.forEach((_, i) => taken.add(start + i));
    bursts.push(group.map(({ kind, index }) => ({ kind, index })));
  }
  return bursts;
}

export function makePlan(seed: number, counts: { payments: number; deposits: number }): Plan {
  const accounts = 2 + Math.floor(counts.payments / 100);
  const items = counts.payments + counts.deposits;
  const trafficMs = Math.max(2000, items * SPACING_MS);

  // Every scenario as often as the others: shuffled rounds of all eight, so a short run covers most.
  const scenarioRng = streamOf(seed, 'scenarios');
  const scenarios: Scenario[] = [];
  while (scenarios.length < counts.payments) scenarios.push(...scenarioRng.shuffle(SCENARIOS));

  const timeRng = streamOf(seed, 'times');
  const startTimes = (n: number) => Array.from({ length: n }, () => timeRng.int(0, trafficMs)).sort((a, b) => a - b);
  const paymentStarts = startTimes(counts.payments);
  const depositStarts = startTimes(counts.deposits);

  const paymentRng = streamOf(seed, 'payments');
  const payments = paymentStarts.map((at, i) => planPayment(paymentRng, i, scenarios[i]!, accounts, at));
  const depositRng = streamOf(seed, 'deposits');
  const deposits: DepositPlan[] = depositStarts.map((at, i) => ({
    index: i,
    account: depositRng.int(0, accounts - 1),
    // One in five under the 1 USDC minimum: recorded, ignored, never settled.
    amountAtomic: depositRng.chance(0.2) ? amount(depositRng, 10_000n, USDC - 1n) : amount(depositRng, USDC, 300n * USDC),
    startAtMs: at,
  }));
  const bursts = planBursts(streamOf(seed, 'bursts'), payments, deposits);
  // Faults strike while Payments are created and paid and until the short expiries have passed.
  const faults = scheduleFaults(streamOf(seed, 'faults'), counts.payments, trafficMs + SHORT_EXPIRY_SECONDS * 1000);

  const body = { seed, accounts, payments, deposits, bursts, faults, trafficMs };
  const digest = createHash('sha256')
    .update(JSON.stringify(body, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)))
    .digest('hex')
    .slice(0, 16);
  return { ...body, digest };
}
