import { jsonRpc } from '../../src/chain/chain-faults';
import { GAS_TREASURY_EMPTY } from '../../src/domain/settlement/settlement-sender';
import { until } from '../until';
import { amountOf, createAndPay, type FlowContext } from './flows';
import { readThroughRestart } from './harness-reads';
import { operatorCli } from './operator';
import type { ReleasedHold } from './verdicts';

/**
 * The planned hold: the gas treasury of one production chain runs dry under load. A Payment paid
 * meanwhile spends its settlement tries and is held `settlement_requires_intervention`, as is anything
 * else that settled on that chain then, and a `gas_treasury_empty` alert is open. The operator refills the treasury and releases each of those
 * holds through the CLI (`payments resolve`, `deposits resolve`, action retry); each must then end as
 * its plan says. A second sweep a minute later releases what was still spending its tries at the refill.
 */
export const TREASURY_DRILL = { at: 0.05, heldWithinMs: 180_000, secondSweepAfterMs: 60_000, releaseWithinMs: 120_000 };

const PLANNED_REASON = 'settlement_requires_intervention';
const HELD = 'requires_intervention';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Runs the drill at its share of the load; answers what failed (the releases are in ctx.releasedHolds). */
export async function treasuryDrill(
  ctx: FlowContext,
  plan: { startedAt: number; loadMs: number },
  log: (line: string) => void,
): Promise<string[]> {
  const wait = plan.startedAt + TREASURY_DRILL.at * plan.loadMs - Date.now();
  if (wait > 0) await sleep(wait);
  const chain = ctx.stack.chains.find((c) => c.environment === 'production')!;
  const merchant = ctx.parties.productionMerchants.find((m) => m.chainId === chain.chainId)!;
  const treasury = ctx.stack.chain.addressBook.deriveAddress({ purpose: 'treasury', index: 0 });
  const before = await ctx.stack.chain.chains.get(chain.chainId).getNativeBalance(treasury);
  const failures: string[] = [];
  await setNativeBalance(chain.rpcUrl, treasury, 0n);
  log(`drill: the gas treasury of ${chain.code} emptied`);
  try {
    const body = { intent: 'receive', destination: { type: 'upa', accountId: merchant.accountId } };
    const id = await createAndPay(ctx, ctx.parties.production, chain.chainId, amountOf(0), body, 'treasury-drill');
    await until(`drill Payment ${id} held ${PLANNED_REASON}`, TREASURY_DRILL.heldWithinMs, async () => {
      const read = (await ctx.parties.production.get('GET /v2/payments/{id}', `/v2/payments/${id}`)).body.payment;
      return read.operationalState === HELD ? true : undefined;
    });
    // The operator learns of it from the alert, before any partner asks.
    const subject = `${chain.chainId}:${treasury.toLowerCase()}`;
    const alert = await readThroughRestart(`the open ${GAS_TREASURY_EMPTY} alert`, () =>
      ctx.stack.db.prisma.operatorAlert.findFirst({ where: { kind: GAS_TREASURY_EMPTY, subject, resolvedAt: null } }),
    );
    if (!alert) failures.push(`treasury drill: no open ${GAS_TREASURY_EMPTY} alert for ${subject} while its Payment was held`);
  } catch (err) {
    failures.push(`treasury drill: ${message(err)}`);
  } finally {
    await setNativeBalance(chain.rpcUrl, treasury, before);
  }
  log(`drill: the gas treasury of ${chain.code} refilled; releasing its holds`);
  await releaseHolds(ctx, chain.chainId);
  await sleep(TREASURY_DRILL.secondSweepAfterMs); // the tries still running at the refill end by then
  await releaseHolds(ctx, chain.chainId);
  log(`drill: ${ctx.releasedHolds.filter((r) => !r.error).length} holds released by the operator`);
  return failures;
}

async function setNativeBalance(rpcUrl: string, address: string, wei: bigint): Promise<void> {
  await jsonRpc(rpcUrl, 'anvil_setBalance', [address, `0x${wei.toString(16)}`]);
}

/** Each item on the chain held for its settlement tries, released with retry through the CLI. */
async function releaseHolds(ctx: FlowContext, chainId: number): Promise<void> {
  const prisma = ctx.stack.db.prisma;
  const payments = await readThroughRestart(`the held Payments on chain ${chainId}`, () =>
    prisma.payment.findMany({ where: { chainId, operationalState: HELD, operationalReasonCode: PLANNED_REASON }, select: { id: true } }),
  );
  const deposits = await readThroughRestart(`the held deposits on chain ${chainId}`, () =>
    prisma.deposit.findMany({ where: { chainId, status: HELD, settlementReasonCode: PLANNED_REASON }, select: { id: true } }),
  );
  const held: ReleasedHold[] = [
    ...payments.map((p) => ({ kind: 'payment' as const, id: p.id, reason: PLANNED_REASON })),
    ...deposits.map((d) => ({ kind: 'deposit' as const, id: d.id, reason: PLANNED_REASON })),
  ];
  for (const h of held) {
    const released = await release(ctx, h);
    ctx.releasedHolds.push(released);
  }
}

/** The CLI's release, asked again while the item is still held (a Temporal role may be down meanwhile). */
async function release(ctx: FlowContext, h: ReleasedHold): Promise<ReleasedHold> {
  const command = h.kind === 'payment' ? 'payments' : 'deposits';
  const args = [command, 'resolve', h.id, '--action', 'retry', '--reason', 'rehearsal: gas treasury refilled'];
  try {
    await until(`the operator's release of ${h.kind} ${h.id}`, TREASURY_DRILL.releaseWithinMs, async () => {
      try {
        await operatorCli(ctx, args);
        return true;
      } catch (err) {
        return (await stillHeld(ctx, h)) ? undefined : Promise.reject(err);
      }
    });
    return h;
  } catch (err) {
    return { ...h, error: message(err) };
  }
}

async function stillHeld(ctx: FlowContext, h: ReleasedHold): Promise<boolean> {
  const prisma = ctx.stack.db.prisma;
  return readThroughRestart(`whether ${h.kind} ${h.id} is still held`, async () => {
    if (h.kind === 'payment') return (await prisma.payment.findUnique({ where: { id: h.id } }))?.operationalState === HELD;
    return (await prisma.deposit.findUnique({ where: { id: h.id } }))?.status === HELD;
  });
}
