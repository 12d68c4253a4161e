import type { Address } from 'viem';
import { createChainFaults } from '../../src/chain/chain-faults';
import { prepareTokenSenders, randomAddress, type TokenSenders, type TokenTransferOrder } from '../../src/chain/sandbox-traffic';
import { scanRange } from '../../src/domain/chain/chain-scan';
import { ownedRecipients } from '../../src/domain/chain/our-addresses';
import type { BenchContext } from '../context';
import type { ScannerTrafficFigures } from '../figures';
import { closedLoop, latency, percentile, sleep } from '../measure';

export interface ScannerTrafficOptions {
  /** Seconds of mainnet-shaped blocks (the lag and the cost are measured over these). */
  seconds: number;
  /** Seconds of blocks holding only our transfers first (the per-transfer cost is measured against them). */
  baselineSeconds: number;
  blockMs: number;
  /** Token transfers per block, ours included. */
  transfersPerBlock: number;
  /** Of those, ours (each pays a fresh Payment in full). */
  oursPerBlock: number;
}

const CURSOR_POLL_MS = 25;
/** How long after the last block the scanner may take to read it before the phase gives up. */
const DRAIN_MS = 120_000;
const ONE_USDC = 1_000_000n;

/**
 * Mainnet-shaped traffic for the chain scanner: anvil mines a block every `blockMs` (the bench mines
 * them on a clock), each holding `transfersPerBlock` real Transfer logs of the configured token from
 * many senders, `oursPerBlock` of them paying Payments. Measures, per block, how long until the
 * scanner has read it (its cursor in chain_scan_cursors passes it), in milliseconds and in blocks
 * mined meanwhile; the scan's own CPU per foreign transfer (rescanCpu); and that each of ours was
 * credited.
 */
export async function scannerPhase(ctx: BenchContext, opts: ScannerTrafficOptions): Promise<void> {
  const { service, out, figures } = ctx;
  const rpcUrl = service.rpcUrl!;
  const foreignPerBlock = opts.transfersPerBlock - opts.oursPerBlock;
  const baselineBlocks = Math.ceil((opts.baselineSeconds * 1000) / opts.blockMs);
  const loadedBlocks = Math.ceil((opts.seconds * 1000) / opts.blockMs);
  const oursNeeded = (baselineBlocks + loadedBlocks) * opts.oursPerBlock;

  out(`scanner: preparing ${foreignPerBlock} foreign senders and ${oursNeeded} Payments`);
  const senders = await prepareTokenSenders({
    rpcUrl,
    count: foreignPerBlock + 1,
    tokenAtomicEach: BigInt(loadedBlocks + 1) * ONE_USDC + BigInt(oursNeeded) * ONE_USDC,
  });
  const payer = senders.senders[foreignPerBlock]!;
  const escrows: Address[] = [];
  await closedLoop(oursNeeded, 8, async () => {
    escrows.push((await ctx.createPayment()).payment.funding.depositAddress.address as Address);
  });
  const recipients = Array.from({ length: 4 * foreignPerBlock }, randomAddress);
  let nextOurs = 0;
  const blockOrders = (foreign: boolean): TokenTransferOrder[] => {
    const orders: TokenTransferOrder[] = [];
    if (foreign)
      for (let i = 0; i < foreignPerBlock; i += 1)
        orders.push({
          from: senders.senders[i]!,
          to: recipients[Math.floor(Math.random() * recipients.length)]!,
          amountAtomic: 1_000n + BigInt(i),
        });
    for (let i = 0; i < opts.oursPerBlock; i += 1)
      orders.splice(Math.floor(Math.random() * (orders.length + 1)), 0, { from: payer, to: escrows[nextOurs++]!, amountAtomic: ONE_USDC });
    return orders;
  };

  const faults = createChainFaults(rpcUrl);
  const modeBefore = await faults.miningMode();
  await faults.pauseMining();
  try {
    out(
      `scanner: ${opts.baselineSeconds} s of blocks holding only ours (baseline), then ${opts.seconds} s of ${opts.transfersPerBlock} transfers per ${opts.blockMs} ms block`,
    );
    const baseline = await driveBlocks(ctx, senders, baselineBlocks, opts.blockMs, () => blockOrders(false));
    const loaded = await driveBlocks(ctx, senders, loadedBlocks, opts.blockMs, () => blockOrders(true));
    const sent = escrows.slice(0, nextOurs).map((a) => a.toLowerCase());
    const credited = await creditedCount(ctx, sent);
    const scanCpu = await rescanCpu(ctx, loaded.first, baseline.first, Math.min(loadedBlocks, baselineBlocks));
    const sortedBlocks = [...loaded.lagBlocks].sort((a, b) => a - b);
    const result: ScannerTrafficFigures = {
      blockMs: opts.blockMs,
      transfersPerBlock: opts.transfersPerBlock,
      oursPerBlock: opts.oursPerBlock,
      seconds: opts.seconds,
      blocks: loadedBlocks,
      lagBlocks: { p50: percentile(sortedBlocks, 50), p99: percentile(sortedBlocks, 99), max: sortedBlocks.at(-1) ?? NaN },
      lag: latency(loaded.lagMs),
      scanCpuUsPerTransfer: Math.round(scanCpu),
      oursSent: sent.length,
      oursCredited: credited,
    };
    figures.scannerUnderTraffic = result;
    out(
      `scanner lag, ${opts.transfersPerBlock} transfers per ${opts.blockMs} ms block (${opts.oursPerBlock} ours) for ${opts.seconds} s: ` +
        `p50 ${result.lagBlocks.p50} / p99 ${result.lagBlocks.p99} / max ${result.lagBlocks.max} blocks; ${result.lag.p50Ms} / ${result.lag.p99Ms} / ${result.lag.maxMs} ms   (target p99 <= 2 blocks)`,
    );
    out(`scanner CPU per foreign transfer: ${result.scanCpuUsPerTransfer} µs (a scan of a loaded block against one holding only ours)`);
    out(`scanner: ours credited ${credited}/${sent.length}`);
  } finally {
    await faults.setMiningMode(modeBefore);
    await senders.release();
  }
}

/**
 * Mines `blocks` blocks on a clock, one every blockMs, each with orders() broadcast just before it,
 * while a poll of the scanner's cursor times each block from its mining to the scanner passing it.
 * Waits for the scanner to pass the last one.
 */
async function driveBlocks(ctx: BenchContext, senders: TokenSenders, blocks: number, blockMs: number, orders: () => TokenTransferOrder[]) {
  const prisma = ctx.service.database.db.prisma;
  const faults = createChainFaults(ctx.service.rpcUrl!);
  const minedAt = new Map<bigint, number>();
  let head = (await faults.head()).number;
  const lagMs: number[] = [];
  const lagBlocks: number[] = [];
  let mining = true;
  const cursor = async () => {
    const rows = await prisma.$queryRaw<
      Array<{ next: bigint }>
    >`SELECT next_from_block AS next FROM chain_scan_cursors WHERE chain_id = ${ctx.network.chainId}`;
    return rows.length ? BigInt(rows[0]!.next) : 0n;
  };
  const first = head + 1n;
  let drainUntil = Infinity;
  const watcher = (async () => {
    let passed = first; // the next block not yet seen read
    while (mining || passed <= head) {
      if (performance.now() > drainUntil)
        throw new Error(`the scanner did not read block ${passed} within ${DRAIN_MS / 1000} s of the last block`);
      const next = await cursor();
      const now = performance.now();
      for (; passed < next && passed <= head; passed += 1n) {
        const at = minedAt.get(passed);
        if (at === undefined) continue;
        lagMs.push(now - at);
        lagBlocks.push(Number(head - passed));
      }
      await sleep(CURSOR_POLL_MS);
    }
  })();
  const t0 = performance.now();
  try {
    for (let i = 0; i < blocks; i += 1) {
      await senders.send(orders());
      const wait = t0 + (i + 1) * blockMs - performance.now();
      if (wait > 0) await sleep(wait);
      const mined = await faults.mine(1);
      minedAt.set(mined.number, performance.now());
      head = mined.number;
    }
  } finally {
    mining = false;
    drainUntil = performance.now() + DRAIN_MS;
  }
  await watcher;
  return { first, lagMs, lagBlocks };
}

/**
 * The scan's own cost per transfer read: blocks scanned again one at a time, as the scanner reads them
 * at the head (logs, decoding, the one owner lookup), with no taker (nothing is handed over twice),
 * a loaded block and a baseline block in turn; the difference per extra transfer, so that what a scan
 * costs whatever it holds (the head, the block hashes, the lookup's round trip) is left out.
 */
async function rescanCpu(ctx: BenchContext, loadedFirst: bigint, baselineFirst: bigint, blocks: number): Promise<number> {
  const { service } = ctx;
  const deps = {
    chains: service.chain.chains,
    takers: [],
    batchBlocks: 1,
    owned: (r: string[]) => ownedRecipients(service.database.db.prisma, r),
  };
  const chain = service.chain.chains.get(ctx.network.chainId);
  const count = async (first: bigint) =>
    (await chain.getTransfers({ token: ctx.tokenAddress, to: undefined, fromBlock: first, toBlock: first + BigInt(blocks) - 1n })).length;
  const extra = (await count(loadedFirst)) - (await count(baselineFirst));
  const micros = { loaded: 0, baseline: 0 };
  const timed = async (which: keyof typeof micros, block: bigint) => {
    const cpu0 = process.cpuUsage();
    await scanRange(deps, { chainId: ctx.network.chainId, fromBlock: block.toString() });
    const cpu = process.cpuUsage(cpu0);
    micros[which] += cpu.user + cpu.system;
  };
  for (let i = 0n; i < BigInt(blocks); i += 1n) {
    await timed('baseline', baselineFirst + i);
    await timed('loaded', loadedFirst + i);
  }
  return (micros.loaded - micros.baseline) / extra;
}

/** How many of these escrows have their transfer recorded, waited for (up to 30 s) until all have. */
async function creditedCount(ctx: BenchContext, escrows: string[]): Promise<number> {
  const prisma = ctx.service.database.db.prisma;
  const deadline = performance.now() + 30_000;
  for (;;) {
    const n = await prisma.paymentTransfer.count({ where: { payment: { escrowAddress: { in: escrows } } } });
    if (n >= escrows.length || performance.now() > deadline) return n;
    await sleep(250);
  }
}
