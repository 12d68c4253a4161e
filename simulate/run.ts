import type { Hash } from 'viem';
import { ChainFaultError } from '../src/chain/chain-faults';
import { createApp } from '../src/domain/apps/apps';
import { formatAtomic } from '../src/domain/amounts/amounts';
import { ChainDriver, recipientWallet } from './chain-driver';
import { PartnerClient } from './partner';
import type { BurstMember, DepositPlan, FaultPlan, PaymentPlan, Plan, SendWhen } from './plan';
import type { Stack } from './stack';

/**
 * Carries out a plan against a running stack: the partner's traffic (accounts, Payments, cancels,
 * deposit addresses), the payers' transfers (alone or several in one block) and the faults, each at
 * its planned time. What it did is recorded for the checks (simulate/verify.ts).
 */

export interface SentTransfer {
  txHash: Hash;
  to: string;
  amountAtomic: bigint;
  /** When it was broadcast (ms since the epoch): how long the service took to notice it is measured from here. */
  sentAt: number;
}

export interface PaymentRecord {
  plan: PaymentPlan;
  id: string | null;
  escrow: string | null;
  sent: SentTransfer[];
  /** What went wrong while driving it (an API refusal, a state never reached...). */
  errors: string[];
}

export interface DepositRecord {
  plan: DepositPlan;
  address: string | null;
  sent: SentTransfer | null;
  errors: string[];
}

export interface FaultRecord {
  fault: FaultPlan;
  startedAtMs: number;
  tookMs: number;
  detail: string;
  error: string | null;
  /** Set when the fault could not be made (the chain kit refused), which says nothing about the service. */
  skipped: string | null;
}

export interface AccountRecord {
  id: string;
  wallet: string;
  depositAddress: string;
}

export interface RunRecord {
  accounts: AccountRecord[];
  payments: PaymentRecord[];
  deposits: DepositRecord[];
  faults: FaultRecord[];
  client: PartnerClient;
  driver: ChainDriver;
  trafficStartedAt: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The states a planned transfer waits for, and the ones after which it never can be sent as planned. */
const WAIT_FOR: Record<Exclude<SendWhen, 'created'>, { ready: string[]; never: string[] }> = {
  seen: { ready: ['processing', 'accepted', 'succeeded'], never: ['expired', 'cancelled', 'failed'] },
  accepted: { ready: ['accepted', 'succeeded'], never: ['expired', 'cancelled', 'failed'] },
  expired: { ready: ['expired'], never: ['succeeded', 'cancelled', 'failed', 'accepted'] },
};

/** Members of a one-block burst wait here until all have their transfer ready (or gave up). */
class Burst {
  private readonly waiting = new Map<
    string,
    { to: string; amountAtomic: bigint; resolve: (h: Hash) => void; reject: (e: unknown) => void }
  >();
  private arrived = 0;

  constructor(
    private readonly size: number,
    private readonly driver: ChainDriver,
    private readonly onSent: (detail: string) => void,
  ) {}

  join(member: string, to: string, amountAtomic: bigint): Promise<Hash> {
    const p = new Promise<Hash>((resolve, reject) => this.waiting.set(member, { to, amountAtomic, resolve, reject }));
    this.arrive();
    return p;
  }

  /** A member that could not get its transfer ready (its Payment was never created). */
  abandon(): void {
    this.arrive();
  }

  private arrive(): void {
    this.arrived += 1;
    if (this.arrived < this.size) return;
    const members = [...this.waiting.values()];
    if (members.length === 0) return;
    this.driver.sendInOneBlock(members).then(
      ({ hashes, block }) => {
        members.forEach((m, i) => m.resolve(hashes[i]!));
        this.onSent(`${members.length} transfers in block ${block}`);
      },
      (err: unknown) => members.forEach((m) => m.reject(err)),
    );
  }
}

export async function runPlan(stack: Stack, plan: Plan, log: (line: string) => void): Promise<RunRecord> {
  const { seed } = plan;
  const credential = await createApp(
    stack.db.prisma,
    { name: `simulation-${seed}`, environment: 'sandbox' },
    stack.environments.apiVersion,
  );
  const client = new PartnerClient(stack.apiUrl, credential);
  const driver = new ChainDriver(stack, seed);
  await driver.fund();

  // Recipients: an account each, its settlement wallet, and one reusable deposit address.
  const accounts: AccountRecord[] = [];
  for (let i = 0; i < plan.accounts; i += 1)
    accounts.push(await createRecipient(client, stack.chainId, `simulation-${seed}-${i}`, recipientWallet(seed, i)));

  const t0 = Date.now();
  const at = (ms: number) => sleep(Math.max(0, t0 + ms - Date.now()));
  const stamp = () => `+${((Date.now() - t0) / 1000).toFixed(1)}s`;

  const bursts = new Map<string, Burst>();
  for (const members of plan.bursts) {
    const burst = new Burst(members.length, driver, (detail) => log(`${stamp()} burst: ${detail}`));
    for (const m of members) bursts.set(memberKey(m), burst);
  }

  const payments: PaymentRecord[] = plan.payments.map((p) => ({ plan: p, id: null, escrow: null, sent: [], errors: [] }));
  const deposits: DepositRecord[] = plan.deposits.map((d) => ({ plan: d, address: null, sent: null, errors: [] }));
  const faults: FaultRecord[] = [];

  async function waitForPayment(rec: PaymentRecord, when: Exclude<SendWhen, 'created'>): Promise<any> {
    const { ready, never } = WAIT_FOR[when];
    // Long enough for the expiry and a worker that was down meanwhile.
    const deadline = Date.now() + rec.plan.expiresInSeconds * 1000 + 300_000;
    for (;;) {
      const { body } = await client.get(`/v2/payments/${rec.id}`);
      const status = body.payment.status as string;
      if (ready.includes(status)) return body;
      if (never.includes(status)) throw new Error(`waited for ${when} to send the next transfer, but the Payment is ${status}`);
      if (Date.now() > deadline) throw new Error(`waited for ${when} to send the next transfer; still ${status} at the deadline`);
      // An expiry is a minute away: no need to ask every second, as a partner's poller wouldn't.
      await sleep(when === 'expired' ? 2500 : 1000);
    }
  }

  async function runPayment(rec: PaymentRecord): Promise<void> {
    const p = rec.plan;
    const burst = bursts.get(memberKey({ kind: 'payment', index: p.index }));
    let joined = false;
    try {
      await at(p.startAtMs);
      const account = accounts[p.account]!;
      const created = await client.post(
        '/v2/payments',
        {
          intent: 'receive',
          amount: formatAtomic(p.amountAtomic, 6),
          assetCode: 'USDC',
          chainId: stack.chainId,
          destination: { type: 'upa', accountId: account.id },
          expiresInSeconds: p.expiresInSeconds,
          externalReference: `simulation-${seed}-${p.index}-${p.scenario}`,
        },
        `payment-${p.index}`,
      );
      const payment = created.body.payment;
      rec.id = payment.id as string;
      rec.escrow = payment.funding.depositAddress.address as string;
      if (created.status !== 201) rec.errors.push(`create answered ${created.status}, expected 201`);
      if (payment.status !== 'requires_payment_method') rec.errors.push(`created as ${payment.status}, expected requires_payment_method`);
      if (payment.paymentAmount.amountAtomic !== p.amountAtomic.toString()) {
        rec.errors.push(`paymentAmount ${payment.paymentAmount.amountAtomic}, asked for ${p.amountAtomic}`);
      }

      if (p.cancelAfterMs !== null) {
        await sleep(p.cancelAfterMs);
        const cancelled = await client.post(`/v2/payments/${rec.id}/cancel`, { reasonCode: 'customer_request' }, `cancel-${p.index}`);
        if (cancelled.body.payment.status !== 'cancelled') rec.errors.push(`cancel answered a ${cancelled.body.payment.status} Payment`);
      }

      for (const [i, t] of p.transfers.entries()) {
        if (t.when !== 'created') {
          const seen = await waitForPayment(rec, t.when);
          // Half paid: the partner is asked for exactly the rest (funds seen count, confirmed or not).
          if (t.when === 'seen' && seen.payment.status === 'processing') {
            const owed = p.amountAtomic - rec.sent.reduce((sum, s) => sum + s.amountAtomic, 0n);
            const asked = seen.nextAction?.depositInstructions?.amountAtomic as string | undefined;
            if (asked !== owed.toString()) rec.errors.push(`processing with ${owed} owed, nextAction asks for ${asked ?? 'nothing'}`);
          }
        }
        let txHash: Hash;
        if (i === 0 && burst) {
          joined = true;
          txHash = await burst.join(memberKey({ kind: 'payment', index: p.index }), rec.escrow, t.amountAtomic);
        } else {
          txHash = await driver.send(rec.escrow, t.amountAtomic);
        }
        rec.sent.push({ txHash, to: rec.escrow, amountAtomic: t.amountAtomic, sentAt: Date.now() });
      }
    } catch (err) {
      rec.errors.push(message(err));
    } finally {
      if (burst && !joined) burst.abandon();
    }
  }

  async function runDeposit(rec: DepositRecord): Promise<void> {
    const d = rec.plan;
    const burst = bursts.get(memberKey({ kind: 'deposit', index: d.index }));
    try {
      await at(d.startAtMs);
      const to = accounts[d.account]!.depositAddress;
      rec.address = to;
      const txHash = burst
        ? await burst.join(memberKey({ kind: 'deposit', index: d.index }), to, d.amountAtomic)
        : await driver.send(to, d.amountAtomic);
      rec.sent = { txHash, to, amountAtomic: d.amountAtomic, sentAt: Date.now() };
    } catch (err) {
      rec.errors.push(message(err));
    }
  }

  async function runFault(f: FaultPlan): Promise<string> {
    switch (f.kind) {
      case 'worker_kill': {
        // Only a worker that is up can be killed mid-step; one still starting is waited for.
        await stack.worker.ready();
        await stack.worker.kill9();
        await sleep(f.downMs);
        stack.worker.start();
        await stack.worker.ready();
        return `killed -9, down ${f.downMs} ms, restarted`;
      }
      case 'reorg': {
        // A reorg of empty blocks tests little: wait (a while, not forever) for a transaction within reach.
        const waited = await driver.waitForTransactions(f.depth, 30_000);
        const r = await driver.reorg(f.depth);
        if (!waited)
          return `depth ${f.depth}: no transactions came within 30 s; blocks ${r.replaced.map((b) => b.number).join(', ')} replaced anyway`;
        return `depth ${f.depth}: blocks ${r.replaced.map((b) => b.number).join(', ')} replaced, ${r.included.length} transactions mined again, ${r.dropped.length} dropped${r.tries > 1 ? ` (anvil replaced them at try ${r.tries})` : ''}`;
      }
      case 'mining_pause': {
        await driver.pauseMining();
        await sleep(f.pauseMs);
        await driver.resumeMining(f.mineBlocks);
        return `no blocks for ${f.pauseMs} ms, then ${f.mineBlocks} mined at once`;
      }
      case 'postgres_pause': {
        const n = await stack.pausePostgres(f.pauseMs);
        return `${n} processes stopped for ${f.pauseMs} ms`;
      }
      case 'temporal_pause': {
        await stack.pauseTemporal(f.pauseMs);
        return `stopped for ${f.pauseMs} ms`;
      }
      case 'fee_spike': {
        const hold = await driver.holdBaseFee(BigInt(f.gwei) * 1_000_000_000n);
        try {
          await sleep(f.holdMs);
        } finally {
          await hold.release();
        }
        return `base fee held at ${f.gwei} gwei for ${f.holdMs} ms, then back to ${hold.baselineWei} wei`;
      }
    }
  }

  async function runFaults(): Promise<void> {
    for (const f of plan.faults) {
      await at(f.atMs);
      const startedAtMs = Date.now() - t0;
      const rec: FaultRecord = { fault: f, startedAtMs, tookMs: 0, detail: '', error: null, skipped: null };
      try {
        rec.detail = await runFault(f);
      } catch (err) {
        // anvil_reorg now and then leaves the blocks as they were, try after try: no reorg happened.
        if (err instanceof ChainFaultError && /unchanged/.test(err.message)) rec.skipped = err.message;
        else rec.error = message(err);
      }
      rec.tookMs = Date.now() - t0 - startedAtMs;
      faults.push(rec);
      log(
        `+${(startedAtMs / 1000).toFixed(1)}s fault ${f.kind}: ${rec.error ? `FAILED: ${rec.error}` : rec.skipped ? `not made: ${rec.skipped}` : rec.detail}`,
      );
    }
  }

  const report = async () => {
    const created = payments.filter((r) => r.id).length;
    const ids = payments.flatMap((r) => (r.id ? [r.id] : []));
    const rows = await stack.db.prisma.payment.groupBy({ by: ['status'], where: { id: { in: ids } }, _count: true }).catch(() => []);
    const byStatus = rows.map((r) => `${r.status} ${r._count}`).join(', ');
    log(
      `${stamp()} ${created}/${payments.length} Payments created (${byStatus || '-'}); ${deposits.filter((d) => d.sent).length}/${deposits.length} deposits sent; ${driver.sent} transfers; ${client.retries} API retries`,
    );
  };
  const progress = setInterval(() => void report(), 15_000);

  log(
    `traffic: ${plan.payments.length} Payments, ${plan.deposits.length} deposits over ${(plan.trafficMs / 1000).toFixed(0)} s; ${plan.faults.length} faults, ${plan.bursts.length} one-block bursts`,
  );
  // Each Payment's waits are bounded by its expiry; the phase as a whole is too, naming what still runs.
  const outstanding = new Set<string>();
  const tracked = (name: string, run: Promise<void>) => {
    outstanding.add(name);
    return run.finally(() => outstanding.delete(name));
  };
  const longestExpiryMs = Math.max(0, ...plan.payments.map((p) => p.expiresInSeconds * 1000));
  try {
    await withinDeadline(
      Promise.all([
        ...payments.map((r) => tracked(`payment ${r.plan.index}`, runPayment(r))),
        ...deposits.map((r) => tracked(`deposit ${r.plan.index}`, runDeposit(r))),
        tracked('faults', runFaults()),
      ]),
      plan.trafficMs + longestExpiryMs + 600_000,
      () => `the traffic phase: ${outstanding.size} still running (${[...outstanding].slice(0, 12).join(', ')})`,
    );
  } finally {
    clearInterval(progress);
  }
  log(`${stamp()} traffic done: every planned request and transfer was made`);
  return { accounts, payments, deposits, faults, client, driver, trafficStartedAt: t0 };
}

/** A recipient through the API: an account, its settlement wallet, and one reusable deposit address. */
export async function createRecipient(client: PartnerClient, chainId: number, name: string, wallet: string): Promise<AccountRecord> {
  const created = await client.post('/v2/accounts', { externalUserId: name }, `account-${name}`);
  const id = created.body.account.id as string;
  const withWallet = await client.post(`/v2/accounts/${id}/connected-wallets`, { chainId, address: wallet }, `wallet-${name}`);
  await client.put(`/v2/accounts/${id}/settlement-profile`, { connectedWalletId: withWallet.body.connectedWallets[0].id });
  const da = await client.post(`/v2/accounts/${id}/deposit-addresses`, { chainId }, `deposit-address-${name}`);
  return { id, wallet, depositAddress: da.body.depositAddress.address as string };
}

function memberKey(m: BurstMember): string {
  return `${m.kind}:${m.index}`;
}

/** `work`, or an error naming what was waited for once `ms` pass (the work itself is left to end). */
async function withinDeadline<T>(work: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`waited ${Math.round(ms / 1000)} s for ${what()}`)), ms);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}
