import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createPublicClient, createWalletClient, erc20Abi, isAddressEqual, parseEventLogs, type Address, type Hash, type Hex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { rpcTransport } from '../../chain/transport';

/**
 * The provider's own wallet on the sandbox chain: it takes stablecoin at its address (every quote's
 * deposit address) and sends it back when a funded payout fails or is returned. Its key is its own,
 * made once under its data dir (or given as an anvil dev key): never the service's custody.
 */
export interface ProviderWallet {
  address: Address;
  /** Whether `txHash` moved exactly `amountAtomic` of `token` to the provider's address. */
  fundingArrived(txHash: Hash, token: Address, amountAtomic: bigint): Promise<'ok' | 'not_found' | 'mismatch'>;
  /** Sends `amountAtomic` of `token` to `to`; resolves with the mined transaction's hash. */
  refund(token: Address, to: Address, amountAtomic: bigint): Promise<Hash>;
}

export function loadOrCreateProviderKey(dataDir: string, given?: string): Hex {
  if (given) return given as Hex;
  const file = path.join(dataDir, 'provider-key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim() as Hex;
  const key = `0x${randomBytes(32).toString('hex')}` as Hex;
  writeFileSync(file, key, { mode: 0o600, flag: 'wx' });
  return key;
}

export function createProviderWallet(opts: { rpcUrl: string; privateKey: Hex }): ProviderWallet {
  const account: PrivateKeyAccount = privateKeyToAccount(opts.privateKey);
  const transport = rpcTransport(opts.rpcUrl);
  const publicClient = createPublicClient({ transport, pollingInterval: 50, cacheTime: 0 });
  const wallet = createWalletClient({ transport, account, pollingInterval: 50 });
  // One transfer at a time: each takes the next nonce, so concurrent refunds can't collide.
  let queue: Promise<unknown> = Promise.resolve();

  return {
    address: account.address,
    async fundingArrived(txHash, token, amountAtomic) {
      const receipt = await publicClient.getTransactionReceipt({ hash: txHash }).catch((err: unknown) => {
        if (err instanceof Error && err.name === 'TransactionReceiptNotFoundError') return null;
        throw err;
      });
      if (!receipt || receipt.status !== 'success') return 'not_found';
      const transfers = parseEventLogs({ abi: erc20Abi, logs: receipt.logs, eventName: 'Transfer' });
      const ours = transfers.filter((l) => isAddressEqual(l.address, token) && isAddressEqual(l.args.to, account.address));
      if (ours.length === 0) return 'not_found';
      return ours.some((l) => l.args.value === amountAtomic) ? 'ok' : 'mismatch';
    },
    refund(token, to, amountAtomic) {
      const run = queue.then(async () => {
        const chainId = await publicClient.getChainId();
        const hash = await wallet.writeContract({
          address: token,
          abi: erc20Abi,
          functionName: 'transfer',
          args: [to, amountAtomic],
          chain: {
            id: chainId,
            name: 'sandbox',
            nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
            rpcUrls: { default: { http: [opts.rpcUrl] } },
          },
        });
        const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: 60_000 });
        if (receipt.status !== 'success') throw new Error(`refund ${hash} reverted`);
        return hash;
      });
      queue = run.catch(() => undefined);
      return run;
    },
  };
}
