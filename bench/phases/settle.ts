import type { Address } from 'viem';
import { fundedPayer, keepMining } from '../chain';
import type { BenchContext } from '../context';
import { latency, showLatency, sleep } from '../measure';

/**
 * Confirmed transfer -> `succeeded`: `count` Payments, one at a time, each paid in full; timed from
 * the moment the payer's transfer reaches the confirmation depth to the row reading `succeeded`. A
 * miner makes a block every 100 ms, so settlements confirm as on a fast chain.
 */
export async function settlePhase(ctx: BenchContext, count: number): Promise<void> {
  const { service, out, figures } = ctx;
  const rpc = service.rpcUrl!;
  const chain = service.chain.chains.get(ctx.network.chainId);
  const payer = await fundedPayer(rpc, BigInt(count + 1) * 1_000_000n);
  const stopMining = keepMining(rpc, 100);
  const samples: number[] = [];
  try {
    // The first Payment is untimed: its transfer's signal waits behind the earlier phases' backlog of
    // first workflow tasks (measured: 34 s after the create phase's 2,000 Payments).
    for (let i = -1; i < count; i += 1) {
      const p = (await ctx.createPayment()).payment;
      const hash = await chain.sendTokenTransfer({
        from: payer,
        token: ctx.tokenAddress,
        to: p.funding.depositAddress.address as Address,
        amountAtomic: 1_000_000n,
      });
      // "Confirmed": the transfer is at the configured depth.
      while ((await chain.getTransactionStatus(hash, ctx.network.confirmations)) !== 'confirmed') await sleep(10);
      const t0 = performance.now();
      for (;;) {
        const row = await service.database.db.prisma.payment.findUnique({ where: { id: p.id }, select: { status: true } });
        if (row?.status === 'succeeded') break;
        await sleep(10);
      }
      if (i >= 0) samples.push(performance.now() - t0);
    }
  } finally {
    await stopMining();
  }
  figures.confirmedTransferToSucceeded = latency(samples);
  out(
    `confirmed transfer -> succeeded (${count} Payments): ${showLatency(figures.confirmedTransferToSucceeded)}   (target p99 <= 1000 ms)`,
  );
}
