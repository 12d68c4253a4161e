import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { parseTransaction, type Address, type Hash, type Hex } from 'viem';
import { createChainRegistry, type ChainRegistry } from '../../src/chain/registry';
import { fundTestWallet, mintTo, SANDBOX_TOKEN_ADDRESS, ensureSandboxToken } from '../../src/chain/sandbox';
import { FeeAboveCapError, type Chain } from '../../src/chain/types';
import { withRpcUrl, type TEnvironments } from '../../src/config/environments';
import type { TGasConfig } from '../../src/config/gas';
import { startAnvil, type AnvilNode } from '../../src/embedded/anvil';
import { checkSettlement, loadLegs, recordReplacement, type SettlementSource } from '../../src/domain/settlement/settlement-legs';
import {
  feeLegs,
  GAS_TREASURY_EMPTY,
  GasTreasuryEmptyError,
  replaceStuckLegs,
  sendSettlement,
  type SettlementSenderDeps,
} from '../../src/domain/settlement/settlement-sender';
import { getHarness } from '../support/harness';

const GWEI = 1_000_000_000n;

/**
 * Gas as on a real chain, on an anvil node that mines only when told to: a settlement signed under a
 * low base fee is stuck once the base fee jumps (anvil_setNextBlockBaseFeePerGas), and is replaced at
 * the same nonce with higher fees, within the network's cap; one transaction per nonce ever pays.
 */
describe('Gas: EIP-1559 fees under a cap, stuck legs replaced, top-ups per network', () => {
  let node: AnvilNode;
  let nextPayer = 3_000_000 + Math.floor(Math.random() * 1_000_000);

  const rpc = async (method: string, params: unknown[] = []) => {
    const res = await fetch(node.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const body = (await res.json()) as { result?: unknown; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result;
  };
  const mine = () => rpc('evm_mine');
  const nextBaseFee = (wei: bigint) => rpc('anvil_setNextBlockBaseFeePerGas', [`0x${wei.toString(16)}`]);
  /** A block at a 1 gwei base fee: each test starts from a calm chain, whatever the last one left. */
  const calm = async () => {
    await nextBaseFee(GWEI);
    await mine();
  };

  before(async () => {
    node = await startAnvil({ port: 0 });
    await ensureSandboxToken({ rpcUrl: node.rpcUrl });
    await rpc('evm_setAutomine', [false]);
  });

  after(async () => {
    await node.stop();
  });

  /** The harness's networks on this node, the test network's gas settings set to `gas`. */
  async function setUp(gas?: TGasConfig): Promise<{ chains: ChainRegistry; chain: Chain; deps: SettlementSenderDeps }> {
    const h = await getHarness();
    const envs = withRpcUrl(h.environments, h.chainId, node.rpcUrl);
    const withGas: TEnvironments = gas
      ? {
          ...envs,
          environments: {
            sandbox: {
              ...envs.environments.sandbox,
              networks: envs.environments.sandbox.networks.map((n) => (n.chainId === h.chainId ? { ...n, gas } : n)),
            },
            production: envs.environments.production,
          },
        }
      : envs;
    const chains = createChainRegistry(withGas);
    return { chains, chain: chains.get(h.chainId), deps: { prisma: h.db.prisma, chains, custody: h.chain.custody } };
  }

  /** A payer holding tokens, and gas unless told otherwise (so no top-up has to be mined first). */
  async function payerWith(tokenAtomic: bigint, nativeWei: bigint) {
    const h = await getHarness();
    const key = { purpose: 'escrow' as const, index: nextPayer++ };
    await rpc('evm_setAutomine', [true]);
    await mintTo({ rpcUrl: node.rpcUrl, to: h.chain.custody.deriveAddress(key), amountAtomic: tokenAtomic });
    if (nativeWei > 0n) await fundTestWallet({ rpcUrl: node.rpcUrl, address: h.chain.custody.deriveAddress(key), nativeWei });
    await rpc('evm_setAutomine', [false]);
    return key;
  }

  async function orderFor(payer: { purpose: 'escrow'; index: number }, netAtomic: bigint) {
    const h = await getHarness();
    const source: SettlementSource = { type: 'payment', id: `payment_gastest_${randomUUID()}` };
    const destination = `0x${randomUUID().replace(/-/g, '').padEnd(40, '0')}` as Address;
    const order = {
      source,
      chainId: h.chainId,
      token: SANDBOX_TOKEN_ADDRESS,
      payer,
      legs: [{ leg: 'net' as const, to: destination, amountAtomic: netAtomic }, ...feeLegs(h.chain.custody, 3n, 2n)],
    };
    return { source, destination, order };
  }

  /** Signed and broadcast under a calm base fee, then a block whose base fee (100 gwei) is far above what they offer. */
  async function sendThenRaiseBaseFee(deps: SettlementSenderDeps, order: Awaited<ReturnType<typeof orderFor>>['order']) {
    await calm();
    await sendSettlement(deps, order);
    await nextBaseFee(100n * GWEI);
    await mine();
  }

  const fees = (serialized: string) => {
    const tx = parseTransaction(serialized as Hex);
    return { type: tx.type, nonce: tx.nonce, maxFeePerGas: tx.maxFeePerGas!, maxPriorityFeePerGas: tx.maxPriorityFeePerGas! };
  };

  test('a leg stuck under a rising base fee is replaced at its nonce with at least +10% fees; only the replacement is mined, and the payee is paid once', async () => {
    const h = await getHarness();
    const { chain, deps } = await setUp();
    const payer = await payerWith(1_000n, 10n ** 18n);
    const { source, destination, order } = await orderFor(payer, 995n);
    const balance = (owner: string) => chain.getTokenBalance({ token: SANDBOX_TOKEN_ADDRESS, owner: owner as Address });

    await sendThenRaiseBaseFee(deps, order);
    const originals = await loadLegs(h.db.prisma, source);
    assert.equal(originals.length, 3);
    for (const leg of originals) {
      const f = fees(leg.serialized);
      assert.equal(f.type, 'eip1559');
      assert.ok(f.maxFeePerGas < 100n * GWEI, 'signed under the old base fee');
      assert.equal(await chain.getTransactionInclusion(leg.txHash as Hash), null, 'stuck');
    }

    assert.deepEqual(await replaceStuckLegs(deps, { source, chainId: h.chainId, payer }), { capped: [] });
    const legs = await loadLegs(h.db.prisma, source);
    assert.equal(legs.length, 6, 'each leg replaced once');
    for (const original of originals) {
      const family = legs.filter((l) => l.nonce === original.nonce);
      assert.deepEqual(family.map((l) => l.status).sort(), ['broadcast', 'superseded']);
      const replacement = family.find((l) => l.status === 'broadcast')!;
      assert.equal(replacement.leg, original.leg);
      const [before, now] = [fees(original.serialized), fees(replacement.serialized)];
      assert.equal(now.nonce, before.nonce);
      assert.ok(now.maxFeePerGas * 10n >= before.maxFeePerGas * 11n && now.maxPriorityFeePerGas * 10n >= before.maxPriorityFeePerGas * 11n);
      assert.ok(now.maxFeePerGas >= 100n * GWEI && now.maxFeePerGas <= 500n * GWEI, 'pays the base fee, within the default cap');
    }
    // Asked again at the same base fee: nothing more to replace.
    await replaceStuckLegs(deps, { source, chainId: h.chainId, payer });
    assert.equal((await loadLegs(h.db.prisma, source)).length, 6);

    await mine();
    for (let i = 0; i < 3; i++) await mine();
    assert.equal(await checkSettlement(deps, source, 1), 'confirmed');
    const final = await loadLegs(h.db.prisma, source);
    for (const l of final) {
      const mined = await chain.getTransactionInclusion(l.txHash as Hash);
      assert.equal(mined !== null, l.status === 'confirmed', `${l.leg} ${l.status}: mined exactly when live`);
    }
    assert.equal(final.filter((l) => l.status === 'confirmed').length, 3);
    assert.equal(await balance(destination), 995n, 'paid once');
    assert.equal(await balance(h.chain.custody.deriveAddress(payer)), 0n);
  });

  test('the original mined after its replacement was recorded (never broadcast: a crash) is the leg; the replacement is superseded', async () => {
    const h = await getHarness();
    const { chain, deps } = await setUp();
    const payer = await payerWith(1_000n, 10n ** 18n);
    const { source, destination, order } = await orderFor(payer, 995n);
    await calm();
    await sendSettlement(deps, order);
    const [net] = await loadLegs(h.db.prisma, source);
    // A replacement signed and recorded, then the worker died before broadcasting it.
    const f = fees(net!.serialized);
    const signed = await chain.signReplacement({
      from: h.chain.custody.signer(payer),
      original: net!.serialized as Hex,
      fees: { maxFeePerGas: f.maxFeePerGas * 2n, maxPriorityFeePerGas: f.maxPriorityFeePerGas * 2n },
    });
    await recordReplacement(h.db.prisma, net!, signed);
    await mine();
    await mine();
    assert.notEqual(await chain.getTransactionInclusion(net!.txHash as Hash), null, 'the original is mined');

    assert.equal(await checkSettlement(deps, source, 1), 'confirmed');
    const legs = await loadLegs(h.db.prisma, source);
    assert.deepEqual(
      legs.filter((l) => l.leg === 'net').map((l) => [l.txHash, l.status]),
      [
        [net!.txHash, 'confirmed'],
        [signed.txHash.toLowerCase(), 'superseded'],
      ],
    );
    // A retry of the send follows the mined original and sends nothing new.
    await sendSettlement(deps, order);
    assert.equal((await loadLegs(h.db.prisma, source)).length, 4);
    assert.equal(await chain.getTokenBalance({ token: SANDBOX_TOKEN_ADDRESS, owner: destination }), 995n);
  });

  test('a reorg that swaps which transaction of a leg is mined swaps the live one; the payee is still paid once', async () => {
    const h = await getHarness();
    const { chain, deps } = await setUp();
    const payer = await payerWith(1_000n, 10n ** 18n);
    const { source, destination, order } = await orderFor(payer, 995n);
    await calm();
    await sendSettlement(deps, order);
    const originals = await loadLegs(h.db.prisma, source);
    const snapshot = await rpc('evm_snapshot');
    await nextBaseFee(100n * GWEI);
    await mine();
    await replaceStuckLegs(deps, { source, chainId: h.chainId, payer });
    await mine();
    assert.equal(await checkSettlement(deps, source, 1), 'confirmed');
    const replacements = (await loadLegs(h.db.prisma, source)).filter((l) => l.status === 'confirmed');
    assert.equal(replacements.length, 3);
    assert.ok(
      replacements.every((r) => !originals.some((o) => o.txHash === r.txHash)),
      'the replacements are the legs',
    );

    // The reorg: the chain goes back to before the base fee jumped, and the originals are mined instead.
    await rpc('evm_revert', [snapshot]);
    await rpc('anvil_dropAllTransactions');
    await nextBaseFee(GWEI);
    for (const o of originals) await chain.broadcast(o.serialized as Hex);
    await mine();
    assert.equal(await checkSettlement(deps, source, 1), 'confirmed');
    const legs = await loadLegs(h.db.prisma, source);
    assert.deepEqual(
      legs
        .filter((l) => l.status === 'confirmed')
        .map((l) => l.txHash)
        .sort(),
      originals.map((o) => o.txHash).sort(),
    );
    assert.deepEqual(
      legs
        .filter((l) => l.status === 'superseded')
        .map((l) => l.txHash)
        .sort(),
      replacements.map((r) => r.txHash).sort(),
    );
    // A redelivery pass finds every leg mined: it sends nothing.
    await sendSettlement(deps, { ...order, redelivery: true });
    assert.equal((await loadLegs(h.db.prisma, source)).length, 6);
    assert.equal(await chain.getTokenBalance({ token: SANDBOX_TOKEN_ADDRESS, owner: destination }), 995n);
  });

  test('the cap stops a replacement above it (the leg waits), and a new send above the cap is not signed', async () => {
    const h = await getHarness();
    const { chain, deps } = await setUp({ maxFeePerGasWei: (50n * GWEI).toString() });
    const payer = await payerWith(2_000n, 10n ** 18n);
    const { source, order } = await orderFor(payer, 995n);
    await sendThenRaiseBaseFee(deps, order);
    assert.deepEqual((await replaceStuckLegs(deps, { source, chainId: h.chainId, payer })).capped, ['net', 'platform_fee', 'partner_fee']);
    const legs = await loadLegs(h.db.prisma, source);
    assert.deepEqual(
      legs.map((l) => l.status),
      ['broadcast', 'broadcast', 'broadcast'],
      'nothing signed above the cap',
    );
    assert.ok(legs.every((l) => fees(l.serialized).maxFeePerGas <= 50n * GWEI));

    const other = await orderFor(payer, 990n);
    await assert.rejects(sendSettlement(deps, other.order), FeeAboveCapError);
    assert.deepEqual(await loadLegs(h.db.prisma, other.source), [], 'nothing recorded');
    assert.equal(await chain.getBaseFee(), 100n * GWEI);
  });

  test('a payer short of gas is topped up in its network’s steps by what its leg may cost at the cap; an empty gas treasury raises an alert and fails the attempt, which a later one completes', async () => {
    const h = await getHarness();
    const topUpWei = 12_345_000_000_000_000n;
    const { chain, deps } = await setUp({ topUpWei: topUpWei.toString(), minBalanceWei: '1000000000000000' });
    const treasury = h.chain.custody.deriveAddress({ purpose: 'treasury', index: 0 });
    await rpc('anvil_setBalance', [treasury, '0x0']);
    await rpc('evm_setAutomine', [true]);
    try {
      await calm();
      const payer = await payerWith(1_000n, 0n);
      await rpc('evm_setAutomine', [true]);
      const { source, destination, order } = await orderFor(payer, 995n);
      await assert.rejects(sendSettlement(deps, order), GasTreasuryEmptyError);
      const subject = `${h.chainId}:${treasury.toLowerCase()}`;
      const open = await h.db.prisma.operatorAlert.findFirst({ where: { kind: GAS_TREASURY_EMPTY, subject, resolvedAt: null } });
      assert.ok(open, 'an operator alert is open');
      assert.deepEqual(await loadLegs(h.db.prisma, source), [], 'nothing signed, nothing lost');

      await rpc('anvil_setBalance', [treasury, `0x${(10n ** 18n).toString(16)}`]);
      await sendSettlement(deps, order);
      assert.equal(await checkSettlement(deps, source, 1), 'confirmed');
      assert.equal(await chain.getTokenBalance({ token: SANDBOX_TOKEN_ADDRESS, owner: destination }), 995n);
      const left = await chain.getNativeBalance(h.chain.custody.deriveAddress(payer));
      let spent = 0n;
      for (const leg of await loadLegs(h.db.prisma, source)) {
        const receipt = await rpc('eth_getTransactionReceipt', [leg.txHash]);
        const { gasUsed, effectiveGasPrice } = receipt as { gasUsed: Hex; effectiveGasPrice: Hex };
        spent += BigInt(gasUsed) * BigInt(effectiveGasPrice);
      }
      const received = left + spent;
      assert.equal(received % topUpWei, 0n, `topped up in whole steps of ${topUpWei}, got ${received}`);
      // Each leg was covered at the 500 gwei cap before it was signed: more than one step of 0.012345.
      const capCost = 500n * GWEI * 51_000n;
      assert.ok(received >= capCost && received / topUpWei >= 3n, `enough for a leg at the cap (${capCost}), got ${received}`);
      assert.equal(
        await h.db.prisma.operatorAlert.count({ where: { kind: GAS_TREASURY_EMPTY, subject, resolvedAt: null } }),
        0,
        'the alert is resolved',
      );
    } finally {
      await rpc('evm_setAutomine', [false]);
    }
  });
});
