import { createPublicClient, http, keccak256, stringToHex, type Address, type Hash } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import {
  ChainFaultError,
  createChainFaults,
  jsonRpc,
  type BaseFeeHold,
  type ChainFaults,
  type ReorgResult,
} from '../src/chain/chain-faults';
import { mintTo, SANDBOX_TOKEN_ADDRESS } from '../src/chain/sandbox';
import type { Stack } from './stack';

/** One holder at a time; the chain's sends and faults take turns through it. */
export class Mutex {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

/**
 * The payers' side of the chain, and the chain faults. Sends and faults are serialized (each send is a
 * few milliseconds): a reorg never reads blocks while a payer's nonce is being taken, and a burst's
 * transfers are the only ones in their block's mempool window. Payers are keys derived from the seed,
 * funded on the sandbox token at start.
 */
export class ChainDriver {
  readonly faults: ChainFaults;
  private readonly lock = new Mutex();
  private readonly payers: PrivateKeyAccount[];
  private nextPayer = 0;
  private poking: Promise<void> | undefined;
  sent = 0;

  constructor(
    private readonly stack: Stack,
    seed: number,
    payerCount = 8,
  ) {
    this.faults = createChainFaults(stack.rpcUrl);
    this.payers = Array.from({ length: payerCount }, (_, i) =>
      privateKeyToAccount(keccak256(stringToHex(`partner-payments/simulate/${seed}/payer/${i}`))),
    );
  }

  /** Gas (anvil_setBalance) and a million test USDC per payer. */
  async fund(): Promise<void> {
    for (const payer of this.payers) {
      await jsonRpc(this.stack.rpcUrl, 'anvil_setBalance', [payer.address, `0x${(10n ** 20n).toString(16)}`]);
    }
    // One sender: mints go one after the other, each mined at once (automine) rather than a second apart.
    await this.faults.resumeMining();
    for (const payer of this.payers) await mintTo({ rpcUrl: this.stack.rpcUrl, to: payer.address, amountAtomic: 10n ** 12n });
    await this.faults.resumeMining({ intervalSeconds: 1 });
  }

  private chain() {
    return this.stack.chain.chains.get(this.stack.chainId);
  }

  private async sendNow(to: string, amountAtomic: bigint): Promise<Hash> {
    const from = this.payers[this.nextPayer++ % this.payers.length]!;
    const hash = await this.chain().sendTokenTransfer({ from, token: SANDBOX_TOKEN_ADDRESS, to: to as Address, amountAtomic });
    this.sent += 1;
    return hash;
  }

  /** One transfer from the next payer; answers once broadcast (the block comes with the next tick). */
  async send(to: string, amountAtomic: bigint): Promise<Hash> {
    const hash = await this.lock.run(() => this.sendNow(to, amountAtomic));
    this.poke();
    return hash;
  }

  /** Several transfers mined together in one block. */
  async sendInOneBlock(transfers: Array<{ to: string; amountAtomic: bigint }>): Promise<{ hashes: Hash[]; block: bigint }> {
    const result = await this.lock.run(async () => {
      const hashes: Hash[] = [];
      const { block } = await this.faults.inOneBlock(async () => {
        for (const t of transfers) hashes.push(await this.sendNow(t.to, t.amountAtomic));
        return hashes;
      });
      return { hashes, block: block.number };
    });
    this.poke();
    return result;
  }

  /**
   * The last `depth` blocks replaced, their transactions mined again in the new ones (same hashes).
   * Now and then (once or twice in a 500-Payment run) anvil_reorg leaves the blocks as they were, and
   * the kit refuses such a reorg: nothing was replaced. The cause is anvil's (a second's pause before
   * each try, mining paused, did not make it go away), not the service's; the reorg is tried again (up
   * to three tries, a fresh block between them; `tries` says how many it took), and a reorg never made
   * is noted, not counted against the service.
   */
  reorg(depth: number): Promise<ReorgResult & { tries: number }> {
    return this.lock.run(async () => {
      await this.faults.pauseMining();
      try {
        for (let tries = 1; ; tries += 1) {
          await new Promise((r) => setTimeout(r, 1100));
          try {
            return { ...(await this.faults.reorg(depth, { reincludeAll: true })), tries };
          } catch (err) {
            if (!(err instanceof ChainFaultError) || !/unchanged/.test(err.message) || tries >= 3) throw err;
            await this.faults.mine(1);
          }
        }
      } finally {
        await this.faults.resumeMining({ intervalSeconds: 1 });
      }
    });
  }

  /** Waits until one of the last `depth` blocks holds a transaction; false after `timeoutMs`. */
  async waitForTransactions(depth: number, timeoutMs: number): Promise<boolean> {
    const client = createPublicClient({ transport: http(this.stack.rpcUrl), cacheTime: 0 });
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const head = await client.getBlockNumber();
      for (let n = head; n > head - BigInt(depth) && n > 0n; n -= 1n) {
        if ((await client.getBlockTransactionCount({ blockNumber: n })) > 0) return true;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    return false;
  }

  /** A busy hour: the base fee held at `baseFeeWei` from the next block (pending transfers mined first). */
  holdBaseFee(baseFeeWei: bigint): Promise<BaseFeeHold> {
    return this.lock.run(() => this.faults.holdBaseFee(baseFeeWei));
  }

  pauseMining(): Promise<void> {
    return this.lock.run(() => this.faults.pauseMining());
  }

  /** Mines `blocks` at once, then a block a second again (as `npm start` runs the sandbox). */
  async resumeMining(blocks: number): Promise<void> {
    await this.lock.run(async () => {
      await this.faults.mine(blocks);
      await this.faults.resumeMining({ intervalSeconds: 1 });
    });
    this.poke();
  }

  /** Wakes the scanner; best effort and never more than one poke in flight (Temporal may be paused). */
  poke(): void {
    if (this.poking) return;
    this.poking = this.stack.engine
      .pokeChainScanner(this.stack.chainId)
      .catch(() => undefined)
      .finally(() => {
        this.poking = undefined;
      });
  }

  tokenBalance(owner: string): Promise<bigint> {
    return this.chain().getTokenBalance({ token: SANDBOX_TOKEN_ADDRESS, owner: owner as Address });
  }
}

/** A recipient's settlement wallet: a key derived from the seed (never an address the service controls). */
export function recipientWallet(seed: number, account: number): Address {
  return privateKeyToAccount(keccak256(stringToHex(`partner-payments/simulate/${seed}/recipient/${account}`))).address;
}
