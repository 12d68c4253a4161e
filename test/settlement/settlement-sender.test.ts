import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Address } from 'viem';
import { createChainRegistry, type ChainRegistry } from '../../src/chain/registry';
import { fundTestWallet, mintTo, SANDBOX_TOKEN_ADDRESS, ensureSandboxToken } from '../../src/chain/sandbox';
import type { Chain } from '../../src/chain/types';
import { withRpcUrl } from '../../src/config/environments';
import { createDatabase } from '../../src/db/client';
import { startAnvil, type AnvilNode } from '../../src/embedded/anvil';
import { checkSettlement, loadLegs, type SettlementSource } from '../../src/domain/settlement/settlement-legs';
import { feeLegs, sendSettlement, type SettlementSenderDeps } from '../../src/domain/settlement/settlement-sender';
import { getHarness } from '../support/harness';
import { until } from '../support/until';

/**
 * The one settlement sender against a chain that mines a block a second (as real chains do, unlike
 * the automining test node): gas top-ups take a block, and senders really run concurrently.
 */
describe('Settlement sender', () => {
  let node: AnvilNode;
  let chains: ChainRegistry;
  let deps: SettlementSenderDeps;
  let chain: Chain;
  // Custody indexes far from the service's own sequences: these payers exist only in this file.
  let nextPayer = 1_000_000 + Math.floor(Math.random() * 1_000_000);

  before(async () => {
    const h = await getHarness();
    node = await startAnvil({ port: 0, blockTime: 1 });
    await ensureSandboxToken({ rpcUrl: node.rpcUrl });
    chains = createChainRegistry(withRpcUrl(h.environments, h.chainId, node.rpcUrl));
    chain = chains.get(h.chainId);
    const treasury = h.chain.custody.deriveAddress({ purpose: 'treasury', index: 0 });
    await fundTestWallet({ rpcUrl: node.rpcUrl, address: treasury, nativeWei: 10n ** 19n });
    deps = { prisma: h.db.prisma, chains, custody: h.chain.custody };
  });

  after(async () => {
    await node.stop();
  });

  /** A service-controlled payer holding tokens and no gas, as a fresh escrow or deposit address is. */
  async function fundedPayer(tokenAtomic: bigint) {
    const h = await getHarness();
    const key = { purpose: 'escrow' as const, index: nextPayer++ };
    await mintTo({ rpcUrl: node.rpcUrl, to: h.chain.custody.deriveAddress(key), amountAtomic: tokenAtomic });
    return key;
  }

  async function orderFor(payer: { purpose: 'escrow'; index: number }, netAtomic: bigint) {
    const h = await getHarness();
    const source: SettlementSource = { type: 'payment', id: `payment_sendertest_${randomUUID()}` };
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

  const balance = (owner: string) => chain.getTokenBalance({ token: SANDBOX_TOKEN_ADDRESS, owner: owner as Address });

  async function confirmed(source: SettlementSource): Promise<void> {
    const h = await getHarness();
    await until(
      async (saw) => {
        const state = await checkSettlement({ prisma: h.db.prisma, chains }, source, 1);
        saw(state);
        return state === 'confirmed';
      },
      `settlement of ${source.id} confirmed`,
      60_000,
    );
  }

  test('tops a payer without gas up from the treasury and waits for it to be mined, so the first attempt pays every leg', async () => {
    const h = await getHarness();
    const payer = await fundedPayer(1_000n);
    const payerAddress = h.chain.custody.deriveAddress(payer);
    const treasury = h.chain.custody.deriveAddress({ purpose: 'treasury', index: 0 });
    const treasuryNonce = await chain.getNonce(treasury, 'pending');
    const { source, destination, order } = await orderFor(payer, 995n);

    const sent = await sendSettlement(deps, order);
    await confirmed(source);

    const legs = await loadLegs(h.db.prisma, source);
    assert.deepEqual(
      legs.map((l) => [l.leg, l.status, l.nonce, l.from.toLowerCase()]),
      [
        ['net', 'confirmed', 0, payerAddress.toLowerCase()],
        ['platform_fee', 'confirmed', 1, payerAddress.toLowerCase()],
        ['partner_fee', 'confirmed', 2, payerAddress.toLowerCase()],
      ],
    );
    assert.equal(sent.txHash, legs[0]!.txHash);
    assert.equal(await balance(destination), 995n);
    assert.equal(await balance(payerAddress), 0n);
    assert.equal(await chain.getNonce(treasury, 'latest'), treasuryNonce + 1, 'exactly one top-up');
  });

  test('eight payers settling at once take distinct treasury nonces for their top-ups, and every one pays', async () => {
    const h = await getHarness();
    const treasury = h.chain.custody.deriveAddress({ purpose: 'treasury', index: 0 });
    const treasuryNonce = await chain.getNonce(treasury, 'pending');
    const orders = [];
    // Funded one by one: the test's own minter is one account with one nonce sequence.
    for (let i = 0; i < 8; i += 1) orders.push(await orderFor(await fundedPayer(100n + BigInt(i)), 95n + BigInt(i)));

    await Promise.all(orders.map((o) => sendSettlement(deps, o.order)));
    for (const o of orders) await confirmed(o.source);

    assert.equal(await chain.getNonce(treasury, 'latest'), treasuryNonce + 8, 'one top-up per payer, none lost to a shared nonce');
    for (const [i, o] of orders.entries()) assert.equal(await balance(o.destination), 95n + BigInt(i));
  });

  test('three settlements from one reusable payer never share a nonce', async () => {
    const h = await getHarness();
    const payer = await fundedPayer(300n);
    const orders = await Promise.all([0, 1, 2].map(() => orderFor(payer, 95n)));

    await Promise.all(orders.map((o) => sendSettlement(deps, o.order)));
    for (const o of orders) await confirmed(o.source);

    const nonces = (await Promise.all(orders.map((o) => loadLegs(h.db.prisma, o.source)))).flat().map((l) => l.nonce);
    assert.deepEqual(
      [...nonces].sort((a, b) => a - b),
      [0, 1, 2, 3, 4, 5, 6, 7, 8],
    );
    for (const o of orders) assert.equal(await balance(o.destination), 95n);
    assert.equal(await balance(h.chain.custody.deriveAddress(payer)), 0n);
  });

  /** The chain as seen by a sender whose process dies right after recording its first leg. */
  function crashingAfterFirstRecord(): SettlementSenderDeps {
    let crashed = false;
    const crashing: Chain = Object.create(chain);
    crashing.broadcast = async (tx) => {
      if (!crashed && typeof tx !== 'string') {
        crashed = true;
        throw new Error('worker killed between recording the leg and broadcasting it');
      }
      return chain.broadcast(tx);
    };
    return { ...deps, chains: { ...chains, get: () => crashing } };
  }

  test('a retry after a crash between recording a leg and broadcasting it sends the same bytes, and pays once', async () => {
    const h = await getHarness();
    const payer = await fundedPayer(100n);
    const { source, destination, order } = await orderFor(payer, 95n);

    await assert.rejects(sendSettlement(crashingAfterFirstRecord(), order), /worker killed/);
    const [recorded] = await loadLegs(h.db.prisma, source);
    assert.equal(recorded?.status, 'broadcast');
    assert.equal(await chain.getTransactionStatus(recorded!.txHash as `0x${string}`, 1), 'not_found', 'never reached the chain');

    await sendSettlement(deps, order);
    await confirmed(source);
    const legs = await loadLegs(h.db.prisma, source);
    assert.equal(legs[0]!.txHash, recorded!.txHash, 'the recorded bytes, not a new signature');
    assert.equal(legs.length, 3);
    assert.equal(await balance(destination), 95n);
  });

  test('a recorded leg whose nonce another transaction took is marked replaced and signed again, and nothing is paid twice', async () => {
    const h = await getHarness();
    const payer = await fundedPayer(200n);
    const first = await orderFor(payer, 95n);
    const second = await orderFor(payer, 95n);

    await assert.rejects(sendSettlement(crashingAfterFirstRecord(), first.order), /worker killed/);
    const [stranded] = await loadLegs(h.db.prisma, first.source);
    // Another settlement from the same address takes the nonce the stranded leg was signed with.
    await sendSettlement(deps, second.order);
    await confirmed(second.source);
    assert.ok((await loadLegs(h.db.prisma, second.source)).some((l) => l.nonce === stranded!.nonce));

    await sendSettlement(deps, first.order);
    await confirmed(first.source);
    const legs = await loadLegs(h.db.prisma, first.source);
    assert.deepEqual(
      legs.map((l) => [l.leg, l.status]),
      [
        ['net', 'replaced'],
        ['net', 'confirmed'],
        ['platform_fee', 'confirmed'],
        ['partner_fee', 'confirmed'],
      ],
    );
    assert.notEqual(legs[1]!.nonce, stranded!.nonce);
    assert.equal(await balance(first.destination), 95n);
    assert.equal(await balance(second.destination), 95n);
    assert.equal(await balance(h.chain.custody.deriveAddress(payer)), 0n);
  });

  test('waiting for another sender or for the chain holds no pooled connection', async () => {
    const h = await getHarness();
    // One connection, handed out within 300 ms or not at all: a sender holding it while a top-up is
    // mined (a block, about a second) would make the other sender fail to reach the database.
    const db = createDatabase({ url: h.databaseUrl, poolMax: 1, acquireTimeoutMs: 300 });
    try {
      const payer = await fundedPayer(200n);
      const orders = await Promise.all([0, 1].map(() => orderFor(payer, 95n)));
      await Promise.all(orders.map((o) => sendSettlement({ ...deps, prisma: db.prisma }, o.order)));
      for (const o of orders) await confirmed(o.source);
      for (const o of orders) assert.equal(await balance(o.destination), 95n);
    } finally {
      await db.close();
    }
  });
});
