import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../src/platform/project-root';
import { until } from '../until';
import type { FlowContext } from './flows';

/**
 * What the rehearsal does as the partner's operations and the service's operator beside the load: a
 * probe Payment after each fault (how long until a Payment succeeds again), and the incident
 * recoveries the plan calls for, the operator's through the built CLI (`payments recover`) with the
 * API's settings, the partner's through the API.
 */

const run = promisify(execFile);

/** A sandbox receive Payment paid in full, created at once; answers when it succeeded (epoch ms). */
export async function probePayment(ctx: FlowContext, n: number, timeoutMs: number): Promise<number> {
  const p = ctx.parties.sandbox;
  const m = ctx.parties.merchant;
  const body = {
    intent: 'receive',
    amount: '1.00',
    assetCode: 'USDC',
    chainId: m.chainId,
    destination: { type: 'upa', accountId: m.accountId },
  };
  const created = (await p.post('POST /v2/payments', '/v2/payments', body, ctx.key(`probe-${n}`))).body.payment;
  const asked = BigInt(created.funding.depositAddress.amountAtomic as string);
  ctx.planned.push({ id: created.id as string, plan: 'paid_in_full', flow: 'probe', paidAtomic: asked, amountAtomic: asked });
  await ctx.parties.payers.get(m.chainId)!.send(created.funding.depositAddress.address as string, asked);
  return until(`probe Payment ${created.id as string} succeeded`, timeoutMs, async () => {
    const read = (await p.get('GET /v2/payments/{id}', `/v2/payments/${created.id as string}`)).body.payment;
    return read.status === 'succeeded' ? Date.now() : undefined;
  });
}

/** Recoveries made at once: each operator one starts a CLI process, and this machine has 2 cores. */
const RECOVERY_CONCURRENCY = 3;

/** Each planned recovery, once its Payment's incident shows; answers what failed. */
export async function recoverIncidents(ctx: FlowContext, timeoutMs: number, log: (line: string) => void): Promise<string[]> {
  const failures: string[] = [];
  const queue = [...ctx.recoveries];
  await Promise.all(
    Array.from({ length: RECOVERY_CONCURRENCY }, async () => {
      for (let r = queue.shift(); r; r = queue.shift()) {
        const failure = await recoverOne(ctx, r, timeoutMs);
        if (failure) failures.push(failure);
      }
    }),
  );
  log(`incident recoveries requested: ${ctx.recoveries.length - failures.length} of ${ctx.recoveries.length}`);
  return failures;
}

async function recoverOne(ctx: FlowContext, r: FlowContext['recoveries'][number], timeoutMs: number): Promise<string | undefined> {
  try {
    const incidentId = await until(`an incident on Payment ${r.paymentId}`, timeoutMs, async () => {
      const list = await ctx.parties.sandbox.get('GET /v2/payments/{id}/incidents', `/v2/payments/${r.paymentId}/incidents`);
      return (list.body.items as Array<{ id: string }>)[0]?.id;
    });
    if (r.by === 'operator') await recoverThroughCli(ctx, r.paymentId, incidentId);
    else
      await ctx.parties.sandbox.post(
        'POST /v2/payments/{id}/incident-recoveries',
        `/v2/payments/${r.paymentId}/incident-recoveries`,
        { incidentId },
        ctx.key('recovery'),
      );
    return undefined;
  } catch (err) {
    return `recovery of Payment ${r.paymentId} by the ${r.by}: ${err instanceof Error ? err.message : String(err)}`;
  }
}

async function recoverThroughCli(ctx: FlowContext, paymentId: string, incidentId: string): Promise<void> {
  await operatorCli(ctx, ['payments', 'recover', paymentId, '--incident', incidentId, '--reason', 'rehearsal: excess']);
}

/** One command of the built operator CLI, as the rehearsal's operator, with the API's settings. */
export async function operatorCli(ctx: FlowContext, args: string[]): Promise<void> {
  const cli = path.join(projectRoot(), 'dist', 'src', 'cli', 'index.js');
  await run(process.execPath, [cli, ...args, '--actor', 'rehearsal-operator'], {
    env: { PATH: process.env.PATH ?? '', ...ctx.stack.serviceEnv },
    timeout: 120_000,
  });
}
