import type { Address, Hash } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { fundTestWallet } from '../../src/chain/sandbox';
import { reconcileLedger } from '../../src/domain/ledger/reconcile';
import { realToken, TWO_CHAINS, type TwoChainId } from '../../src/embedded/two-chains';
import { getHarness } from './harness';
import { poll, until, type Check } from './until';

export {
  realToken,
  startTwoChains,
  TWO_CHAINS,
  twoChainNetworks,
  withTwoChainProduction,
  type TwoChainId,
  type TwoChains,
} from '../../src/embedded/two-chains';

/** A fresh payer on one of the two chains with `tokenAtomic` of the asset and gas money. */
export async function newPayerOn(chainId: TwoChainId, symbol: 'USDC' | 'EURC', tokenAtomic: bigint): Promise<PrivateKeyAccount> {
  const h = await getHarness();
  const payer = privateKeyToAccount(generatePrivateKey());
  await fundTestWallet({
    rpcUrl: h.twoChains.nodes[chainId].rpcUrl,
    address: payer.address,
    tokenAtomic,
    token: realToken(chainId, symbol),
  });
  return payer;
}

/** Sends the asset on that chain, waits for its block and pokes that chain's scanner. */
export async function payOn(
  chainId: TwoChainId,
  symbol: 'USDC' | 'EURC',
  payer: PrivateKeyAccount,
  to: string,
  amountAtomic: bigint,
): Promise<Hash> {
  const h = await getHarness();
  const chain = h.chain.chains.get(chainId);
  const txHash = await chain.sendTokenTransfer({ from: payer, token: realToken(chainId, symbol), to: to as Address, amountAtomic });
  await until(async (saw) => {
    const status = await chain.getTransactionStatus(txHash, 1);
    saw(status);
    return status === 'confirmed';
  }, `the block of ${txHash} on chain ${chainId}`);
  await h.engine.pokeChainScanner(chainId);
  return txHash;
}

export async function balanceOn(chainId: TwoChainId, symbol: 'USDC' | 'EURC', owner: string): Promise<bigint> {
  const h = await getHarness();
  return h.chain.chains.get(chainId).getTokenBalance({ token: realToken(chainId, symbol), owner: owner as Address });
}

/**
 * Polls until check() answers a value, mining a block on both chains each round and poking both
 * scanners every 3 s (as test/support/chain.ts eventually does for the sandbox chain).
 */
export async function eventuallyOnTwoChains<T>(check: Check<T>, what: string, timeoutMs = 120_000): Promise<T> {
  const h = await getHarness();
  let poked = 0;
  return poll(check, what, {
    timeoutMs,
    done: (value) => Boolean(value),
    async between() {
      for (const c of TWO_CHAINS) await h.twoChains.mine(c.chainId);
      if (Date.now() - poked >= 3000) {
        for (const c of TWO_CHAINS) await h.engine.pokeChainScanner(c.chainId);
        poked = Date.now();
      }
      await new Promise((r) => setTimeout(r, 150));
    },
  });
}

/** ledger reconcile, the differences and heads of the two chains only (the sandbox chain is other tests'). */
export async function reconcileTwoChains() {
  const h = await getHarness();
  return eventuallyOnTwoChains(async (saw) => {
    const result = await reconcileLedger({ prisma: h.db.prisma, chains: h.chain.chains, custody: h.chain.custody });
    const differences = result.differences.filter((d) => d.chainId !== h.chainId);
    saw(differences);
    return differences.length === 0 ? result : undefined;
  }, 'ledger reconcile clean on chains 8453 and 1');
}
