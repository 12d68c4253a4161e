import { type PrivateKeyAccount } from 'viem/accounts';
import type { Address, Hash } from 'viem';
import { SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import type { Deposit } from '../../src/generated/prisma/client';
import { mine, pokeScanner } from '../support/chain';
import { getHarness } from '../support/harness';
import { skipTime } from '../support/workflow-result';
import { poll } from '../support/until';

export const USDC = 1_000_000n;
export const TOKEN = SANDBOX_TOKEN_ADDRESS;

// Shared chain helpers (payer wallets, anvil RPC, balances, scanner poke).
export { mine, newPayer, pokeScanner, rpc, tokenBalance } from '../support/chain';

export async function blockNumber(): Promise<bigint> {
  const h = await getHarness();
  return h.chain.chains.get(h.chainId).getBlockNumber();
}

/** An account with a connected wallet as its settlement destination (a fresh random address). */
export async function send(payer: PrivateKeyAccount, to: string, amountAtomic: bigint): Promise<Hash> {
  const h = await getHarness();
  return h.chain.chains.get(h.chainId).sendTokenTransfer({ from: payer, token: TOKEN, to: to as Address, amountAtomic });
}

/** Makes the chain scanner read again from `fromBlock` (a rescan, or after a reorg). */
export async function restartScannerFrom(fromBlock: bigint): Promise<void> {
  const h = await getHarness();
  await h.engine.rescanChain(h.chainId, fromBlock);
}

/**
 * Waits until the account's deposits satisfy `done`. Each round pokes the scanner (a poke that lands
 * while a scan is running can be lost), optionally mines a block (so confirmations advance) and lets
 * workflow time move on by a second (time skipping), then re-reads. The deadline only turns a hang
 * into a failure that names what was awaited.
 */
export async function waitForDeposits(
  accountId: string,
  done: (deposits: Deposit[]) => boolean,
  opts: { mine?: boolean; what?: string } = {},
): Promise<Deposit[]> {
  const h = await getHarness();
  return poll(
    async (saw) => {
      const rows = await h.db.prisma.deposit.findMany({ where: { accountId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
      saw(rows.map((r) => [r.id, r.status, r.settlementStatus, r.settlementReasonCode]));
      return done(rows) ? rows : undefined;
    },
    opts.what ?? `deposits of ${accountId}`,
    {
      timeoutMs: 120_000,
      async between() {
        await pokeScanner();
        if (opts.mine) await mine(1);
        await skipTime(h, 1000);
      },
    },
  );
}

/** A deposit's events in order: name, account and payload. */
export async function depositEvents(depositId: string) {
  const h = await getHarness();
  const events = await h.db.prisma.event.findMany({
    where: { resourceType: 'deposit', resourceId: depositId },
    orderBy: { sequence: 'asc' },
  });
  return events.map((e) => ({ name: e.name, accountId: e.accountId, payload: e.payload as Record<string, unknown> }));
}

export const statuses = (rows: Deposit[]) => rows.map((r) => r.status);

export { cli, runCli } from '../support/cli';
