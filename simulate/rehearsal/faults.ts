import { createChainFaults } from '../../src/chain/chain-faults';
import type { FlowContext } from './flows';
import { probePayment } from './operator';
import type { RehearsalStack } from './stack';
import { BOUNDS, type Outage } from './verdicts';
import type { PARTS } from './checks';
import type { WebhookReceiver } from '../webhook-receiver';

/**
 * The fault plan: every part killed the hard way (SIGKILL), each once under load, at its share of the
 * load's time, and started again at once as a supervisor would; and the production partner's webhook
 * receiver failing for a while. Each kill is timed twice: until its part is back (a service process
 * prints its ready line; a Temporal process answers and the frontend serves the namespace; PostgreSQL
 * has replayed its WAL and answers), and until a Payment created at the kill has succeeded. Last, a
 * busy hour on the sandbox chain: its base fee held at 150 gwei (far under the 500 gwei cap) for a
 * while, a Payment paid and settled meanwhile; its part is "back" when the fee falls again.
 */

type Part = (typeof PARTS)[number];

export interface Fault {
  at: number;
  part: Part;
  what: string;
  /** Kills the part and starts it again; resolves once it is back. */
  run(): Promise<void>;
}

const restartService = async (p: RehearsalStack['apis'][number]) => {
  await p.kill9();
  p.start();
  await p.ready();
};

export function faultPlan(stack: RehearsalStack): Fault[] {
  const [api, worker] = [stack.apis[0]!, stack.workers[0]!];
  const sandboxChain = stack.chains.find((c) => c.environment === 'sandbox')!;
  const temporal = (member: string) => async () => {
    stack.cluster.kill(member);
    await stack.cluster.restart(member);
  };
  return [
    { at: 0.1, part: 'api', what: `SIGKILL ${api.name}`, run: () => restartService(api) },
    { at: 0.2, part: 'worker', what: `SIGKILL ${worker.name}`, run: () => restartService(worker) },
    { at: 0.3, part: 'temporal-frontend', what: 'SIGKILL the Temporal frontend', run: temporal('frontend') },
    {
      at: 0.4,
      part: 'temporal-history',
      what: 'SIGKILL the first Temporal history process (its shards go to the second)',
      run: temporal('history'),
    },
    { at: 0.5, part: 'temporal-matching', what: 'SIGKILL the Temporal matching service', run: temporal('matching') },
    { at: 0.6, part: 'temporal-worker', what: "SIGKILL Temporal's worker service", run: temporal('worker') },
    {
      at: 0.7,
      part: 'postgres',
      what: "SIGKILL PostgreSQL's postmaster",
      run: async () => {
        const crash = await stack.crashPostgres();
        if (!crash.recovered) throw new Error('PostgreSQL started again without crash recovery (its log says none)');
      },
    },
    {
      at: 0.8,
      part: 'chain-fee-spike',
      what: `the base fee of ${sandboxChain.code} held at ${FEE_SPIKE.gwei} gwei for ${FEE_SPIKE.ms / 1000} s`,
      run: async () => {
        const faults = createChainFaults(sandboxChain.rpcUrl);
        const hold = await faults.holdBaseFee(BigInt(FEE_SPIKE.gwei) * 1_000_000_000n);
        try {
          await sleep(FEE_SPIKE.ms); // the busy hour's length, not a wait for anything
        } finally {
          await hold.release();
        }
      },
    },
  ];
}

/** The busy hour: the highest base fee the gas work tests settle at, for under the bound on a part's time away. */
export const FEE_SPIKE = { gwei: 150, ms: 45_000 };

/** The production receiver answers 500 for this long, at this share of the load (deliveries retry after 30 s). */
export const RECEIVER_DOWN = { at: 0.45, ms: 20_000 };

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs the plan in order, each fault no earlier than its time and after the last one's probe Payment. */
export async function runFaults(
  ctx: FlowContext,
  plan: { faults: Fault[]; receiver: WebhookReceiver; startedAt: number; loadMs: number },
  outages: Outage[],
  log: (line: string) => void,
): Promise<void> {
  const receiverDown = sleep(Math.max(0, plan.startedAt + RECEIVER_DOWN.at * plan.loadMs - Date.now())).then(() => {
    plan.receiver.failUntil = Date.now() + RECEIVER_DOWN.ms;
    log(`fault: the production webhook receiver answers 500 for ${RECEIVER_DOWN.ms / 1000} s`);
  });
  for (const [i, f] of plan.faults.entries()) {
    const wait = plan.startedAt + f.at * plan.loadMs - Date.now();
    if (wait > 0) await sleep(wait);
    outages.push(await timeFault(ctx, f, i, log));
  }
  await receiverDown;
}

async function timeFault(ctx: FlowContext, f: Fault, i: number, log: (line: string) => void): Promise<Outage> {
  const outage: Outage = { part: f.part, what: f.what, at: Date.now() };
  const probe = probePayment(ctx, i, BOUNDS.paymentMs + 60_000).then(
    (at) => void (outage.paymentAt = at),
    (err: unknown) => void (outage.error = joined(outage.error, `the probe Payment: ${err instanceof Error ? err.message : String(err)}`)),
  );
  try {
    await f.run();
    outage.backAt = Date.now();
  } catch (err) {
    outage.error = joined(outage.error, `did not come back: ${err instanceof Error ? err.message : String(err)}`);
  }
  await probe;
  const secs = (t: number | undefined) => (t === undefined ? 'never' : `${((t - outage.at) / 1000).toFixed(1)} s`);
  log(`fault: ${f.what}: back after ${secs(outage.backAt)}, a Payment succeeded after ${secs(outage.paymentAt)}`);
  return outage;
}

const joined = (a: string | undefined, b: string) => (a ? `${a}; ${b}` : b);
