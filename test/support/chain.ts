import { decodeFunctionData, erc20Abi, type Address, type Hash, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { createChainFaults } from '../../src/chain/chain-faults';
import { fundTestWallet, SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { readChainState, restoreChain, withChainRestored } from './chain-baseline';
import { getHarness } from './harness';
import { isLive, loadLegs, type SettlementLeg, type SettlementSource } from '../../src/domain/settlement/settlement-legs';
import { poll, until, type Check } from './until';

/** A fresh payer wallet with test USDC (atomic units) and gas money. */
export async function newPayer(tokenAtomic: bigint): Promise<PrivateKeyAccount> {
  const h = await getHarness();
  const payer = privateKeyToAccount(generatePrivateKey());
  await fundTestWallet({ rpcUrl: h.rpcUrl, address: payer.address, tokenAtomic });
  return payer;
}

/** Sends test USDC on the sandbox chain and wakes the scanner, as `npm run cli -- sandbox pay` does. */
export async function payTo(payer: PrivateKeyAccount, to: string, amountAtomic: bigint): Promise<Hash> {
  const h = await getHarness();
  const chain = h.chain.chains.get(h.chainId);
  const txHash = await chain.sendTokenTransfer({ from: payer, token: SANDBOX_TOKEN_ADDRESS, to: to as Address, amountAtomic });
  // anvil may answer before its automined block is readable; the scanner must see the block.
  await until(async (saw) => {
    const status = await chain.getTransactionStatus(txHash, 1);
    saw(status);
    return status === 'confirmed';
  }, `the block of ${txHash}`);
  await pokeScanner();
  return txHash;
}

export async function pokeScanner(): Promise<void> {
  const h = await getHarness();
  await h.engine.pokeChainScanner(h.chainId);
}

export async function rpc<T = unknown>(method: string, params: unknown[] = []): Promise<T> {
  const h = await getHarness();
  const res = await fetch(h.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

/**
 * Runs `body` on the harness chain with mining paused (blocks come only when mined by hand); the mining
 * mode and the base fee it found are back afterwards, also when `body` throws (withChainRestored).
 */
export async function withMiningPaused<T>(body: () => Promise<T>): Promise<T> {
  const h = await getHarness();
  return withChainRestored(h.rpcUrl, async () => {
    await createChainFaults(h.rpcUrl).pauseMining();
    return body();
  });
}

export async function mine(blocks = 1): Promise<void> {
  await rpc('anvil_mine', [`0x${blocks.toString(16)}`]);
}

export async function tokenBalance(owner: string): Promise<bigint> {
  const h = await getHarness();
  return h.chain.chains.get(h.chainId).getTokenBalance({ token: SANDBOX_TOKEN_ADDRESS, owner: owner as Address });
}

export async function setNativeBalance(address: string, wei: bigint): Promise<void> {
  await rpc('anvil_setBalance', [address, `0x${wei.toString(16)}`]);
}

/**
 * A block a second, each scanned at once (as the service's scanner does when it waits for blocks),
 * until `check` answers, for at most `blocks` blocks. Never skips time: a wait that skips time would
 * hide what the blocks alone do, and would skip through a workflow task running a local activity.
 */
export async function blockByBlock<T>(check: () => Promise<T | undefined>, what: string, blocks = 300): Promise<T> {
  for (let round = 0; round < blocks; round += 1) {
    const value = await check();
    if (value) return value;
    await mine(1);
    await pokeScanner();
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`timed out after ${blocks} blocks waiting for ${what}`);
}

/**
 * Polls until check() answers a value, mining a block each round so confirmations advance (or, with
 * `mine: false`, leaving the chain as it is). The test scanner polls hourly, so it is poked at once
 * and then every second. Never faster: each poke is a workflow task of the scanner, and pokes faster
 * than that kept it from ever completing its continue-as-new (each new signal refuses the task that
 * carries it).
 * A generous deadline, not a timing assertion: the failure says what was last seen (what the check
 * passed to `saw`, else its last answer or error). A wrong answer (a 5xx, an OpenAPI violation, a
 * failed assertion) fails it at once (test/support/until.ts).
 */
export async function eventually<T>(check: Check<T>, what: string, opts: { timeoutMs?: number; mine?: boolean } = {}): Promise<T> {
  const mining = opts.mine ?? true;
  const pokeEveryMs = 1000;
  let poked = 0;
  return poll(check, what, {
    timeoutMs: opts.timeoutMs ?? 90_000,
    // Truthy, as it always was: a check answering 0 or '' is not done.
    done: (value) => Boolean(value),
    async between() {
      if (mining) await mine(1);
      if (Date.now() - poked >= pokeEveryMs) {
        await pokeScanner();
        poked = Date.now();
      }
      await new Promise((r) => setTimeout(r, 150));
    },
  });
}

export type TransactionReceipt = { blockNumber: Hex; blockHash: Hex; logs: Array<{ logIndex: Hex }> };

/** The transaction's receipt, waited for: a busy node may answer before it has one. */
export function receiptOf(hash: Hex): Promise<TransactionReceipt> {
  return until(() => rpc<TransactionReceipt | null>('eth_getTransactionReceipt', [hash]), `the receipt of ${hash}`);
}

/** A transaction waiting in the harness node's mempool. */
export interface PendingTx {
  hash: Hex;
  from: Address;
  to: Address | null;
  input: Hex;
}

async function pendingTransactions(): Promise<PendingTx[]> {
  const pool = await rpc<{ pending?: Record<string, Record<string, PendingTx>> }>('txpool_content');
  return Object.values(pool.pending ?? {}).flatMap((byNonce) => Object.values(byNonce));
}

/** Whether tx is a transfer of the sandbox token to `to`. */
export function paysInToken(tx: PendingTx, to: string): boolean {
  if (tx.to?.toLowerCase() !== SANDBOX_TOKEN_ADDRESS.toLowerCase()) return false;
  try {
    const called = decodeFunctionData({ abi: erc20Abi, data: tx.input });
    return called.functionName === 'transfer' && called.args[0].toLowerCase() === to.toLowerCase();
  } catch {
    return false;
  }
}

/**
 * Runs `send` on a held chain: mining paused, a block mined only for the pending transactions that
 * `mineFor` picks (so that `send` can finish), none for anything else. Answers with the chain still
 * held: no block comes, so no transfer gains a confirmation, until release() restores the mining mode
 * it found. A state that lasts until the next block (a transfer confirming) then lasts as long as
 * the test needs to see it, however fast or slow the machine. Call release() in a finally: it puts the
 * mining mode and base fee back as found (restoreChain).
 */
export async function sendOnHeldChain<T>(
  send: () => Promise<T>,
  mineFor: (tx: PendingTx) => boolean,
  what: string,
): Promise<{ result: T; release(): Promise<void> }> {
  const h = await getHarness();
  const faults = createChainFaults(h.rpcUrl);
  const before = await readChainState(h.rpcUrl);
  await faults.pauseMining();
  const release = () => restoreChain(h.rpcUrl, before);
  try {
    let settled = false;
    const sending = send().finally(() => {
      settled = true;
    });
    sending.catch(() => undefined); // awaited below
    await until(
      async (saw) => {
        // Read first: once send has settled, everything it broadcast is in the mempool.
        const sent = settled;
        const wanted = (await pendingTransactions()).filter(mineFor);
        saw({ sendSettled: sent, pendingPicked: wanted.map((t) => t.hash) });
        if (wanted.length > 0) await faults.mine(1);
        return sent && wanted.length === 0;
      },
      what,
      60_000,
    );
    return { result: await sending, release };
  } catch (err) {
    await release();
    throw err;
  }
}

/** The gas treasury's balance: the treasury pays every escrow's gas, so with none settlement attempts fail before broadcasting. */
export async function setTreasuryGas(wei: bigint): Promise<void> {
  const h = await getHarness();
  await setNativeBalance(h.chain.custody.deriveAddress({ purpose: 'treasury', index: 0 }), wei);
}

/**
 * On a chain that mines only when told (automine off): mines a block a round until `count` settlement
 * legs are recorded as sent, then until each is in a block. Answers the legs.
 */
export async function settlementLegsMined<L extends { txHash: string }>(liveLegs: () => Promise<L[]>, count: number): Promise<L[]> {
  const h = await getHarness();
  const chain = h.chain.chains.get(h.chainId);
  const aBlockARound = async () => {
    await mine(1);
    await new Promise((r) => setTimeout(r, 100));
  };
  const legs = await poll(
    async (saw) => {
      const sent = await liveLegs();
      saw(sent.map((l) => l.txHash));
      return sent.length >= count ? sent : undefined;
    },
    `${count} settlement legs sent`,
    { timeoutMs: 60_000, between: aBlockARound },
  );
  const inBlock = async (l: L) => (await chain.getTransactionInclusion(l.txHash as Hash)) !== null;
  await poll(async () => (await Promise.all(legs.map(inBlock))).every(Boolean), 'the settlement legs mined', {
    timeoutMs: 20_000,
    between: aBlockARound,
  });
  return legs;
}

/**
 * On a chain that mines only when told: a block a round, only while the source's `leg` is not mined
 * yet (a gas top-up of its sender may have to be mined first), so that it ends with the leg in the
 * head block, at one confirmation; no block comes until the test mines one. Answers its hash.
 */
export async function legMinedAtHead(source: SettlementSource, leg: SettlementLeg['leg'] = 'net'): Promise<Hash> {
  const h = await getHarness();
  const chain = h.chain.chains.get(h.chainId);
  const live = async () => (await loadLegs(h.db.prisma, source)).find((l) => l.leg === leg && isLive(l));
  const minedAt = async (txHash: string) => (await chain.getTransactionInclusion(txHash as Hash))?.blockNumber ?? null;
  const sent = await poll(
    async (saw) => {
      const l = await live();
      const block = l ? await minedAt(l.txHash) : null;
      saw({ leg: l?.txHash ?? 'not sent yet', minedAt: block });
      return l && block !== null ? l : undefined;
    },
    `the ${leg} leg of ${source.type} ${source.id} sent and mined`,
    {
      timeoutMs: 90_000,
      async between() {
        const l = await live();
        if (!l || (await minedAt(l.txHash)) === null) await mine(1);
        await new Promise((r) => setTimeout(r, 100));
      },
    },
  );
  const head = BigInt(await rpc<Hex>('eth_blockNumber'));
  const block = BigInt((await receiptOf(sent.txHash as Hash)).blockNumber);
  if (block !== head) throw new Error(`the ${leg} leg of ${source.type} ${source.id} is in block ${block}, not the head ${head}`);
  await pokeScanner();
  return sent.txHash as Hash;
}
