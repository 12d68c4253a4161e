import assert from 'node:assert/strict';
import { parseTransaction, type Hash, type Hex } from 'viem';
import type { SettlementSource } from '../../src/domain/settlement/settlement-legs';
import { eventually, mine, rpc } from './chain';
import { getHarness } from './harness';

const GWEI = 1_000_000_000n;

/** A settlement's legs, oldest first, as the settlement sender recorded them. */
export async function legsOf(source: SettlementSource) {
  const h = await getHarness();
  return h.db.prisma.settlementLeg.findMany({
    where: { sourceType: source.type, sourceId: source.id },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
}

/**
 * With mining paused, `start` makes the service sign and broadcast `count` legs of `source` (it answers
 * the source once known). Once the node holds them all, the next block's base fee jumps far above what
 * they offer (`baseFeeWei`, 200 gwei unless given) and that block is mined without them. Then it waits for the service to replace each leg at
 * its nonce, with at least +10% on both fees. Mining is back on at the end, so the replacements are mined.
 */
export async function replacedUnderRisingBaseFee(count: number, start: () => Promise<SettlementSource>, baseFeeWei = 200n * GWEI) {
  const h = await getHarness();
  const chain = h.chain.chains.get(h.chainId);
  await rpc('evm_setAutomine', [false]);
  try {
    const source = await start();
    const originals = await eventually(
      async (saw) => {
        const legs = await legsOf(source);
        saw(legs.map((l) => l.status));
        if (legs.length < count) return undefined;
        // Recorded before broadcast: wait until the node holds every one.
        const pooled = await Promise.all(legs.map((l) => rpc('eth_getTransactionByHash', [l.txHash])));
        return pooled.every((t) => t !== null) ? legs : undefined;
      },
      `the ${count} legs of ${source.type} ${source.id} broadcast`,
      { mine: false },
    );
    await rpc('anvil_setNextBlockBaseFeePerGas', [`0x${baseFeeWei.toString(16)}`]);
    await mine(1);
    for (const l of originals) assert.equal(await chain.getTransactionInclusion(l.txHash as Hash), null, `${l.leg} stuck`);

    const replaced = await eventually(
      async (saw) => {
        const legs = await legsOf(source);
        saw(legs.map((l) => [l.leg, l.nonce, l.status]));
        return legs.length === 2 * count ? legs : undefined;
      },
      `each leg of ${source.type} ${source.id} replaced at its nonce`,
      { mine: false },
    );
    for (const original of originals) {
      const family = replaced.filter((l) => l.nonce === original.nonce);
      assert.deepEqual(family.map((l) => [l.leg, l.status]).sort(), [
        [original.leg, 'broadcast'],
        [original.leg, 'superseded'],
      ]);
      const [was, now] = [original, family.find((l) => l.status === 'broadcast')!].map((l) => parseTransaction(l.serialized as Hex));
      assert.equal(now!.nonce, was!.nonce);
      assert.ok(
        now!.maxFeePerGas! * 10n >= was!.maxFeePerGas! * 11n && now!.maxPriorityFeePerGas! * 10n >= was!.maxPriorityFeePerGas! * 11n,
        '+10% on both fees',
      );
    }
    return source;
  } finally {
    await rpc('evm_setAutomine', [true]);
  }
}

/** Every leg of `source` is on chain exactly when it is the live one (confirmed); answers the confirmed legs. */
export async function assertMinedExactlyWhenLive(source: SettlementSource) {
  const h = await getHarness();
  const chain = h.chain.chains.get(h.chainId);
  const legs = await legsOf(source);
  for (const l of legs) {
    const mined = await chain.getTransactionInclusion(l.txHash as Hash);
    assert.equal(mined !== null, l.status === 'confirmed', `${l.leg} ${l.txHash} (${l.status}): mined exactly when it is the leg`);
  }
  return legs.filter((l) => l.status === 'confirmed');
}
