import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { fundTestWallet } from '../src/chain/sandbox';
import { sleep } from './measure';

/**
 * Mines a block every `everyMs` until the answer is called (and awaited): confirmations come at
 * once, as on a fast chain.
 */
export function keepMining(rpcUrl: string, everyMs: number): () => Promise<void> {
  let mining = true;
  const mine = async () => {
    // A dropped keep-alive connection to anvil only costs one block.
    await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_mine', params: ['0x1'] }),
    }).catch(() => undefined);
  };
  const miner = (async () => {
    while (mining) {
      await mine();
      await sleep(everyMs);
    }
  })();
  return async () => {
    mining = false;
    await miner;
  };
}

/** A fresh payer wallet holding `tokenAtomic` of the test token and gas money. */
export async function fundedPayer(rpcUrl: string, tokenAtomic: bigint): Promise<PrivateKeyAccount> {
  const payer = privateKeyToAccount(generatePrivateKey());
  await fundTestWallet({ rpcUrl, address: payer.address, tokenAtomic, nativeWei: 10n ** 18n });
  return payer;
}
