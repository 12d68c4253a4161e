import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Address, Hash } from 'viem';
import { createChainFaults } from '../../src/chain/chain-faults';
import type { TTransactionFinality } from '../../src/domain/chain/finality.schemas';
import { call, newApp } from '../support/api-client';
import { endsWithBooksChecked } from '../support/books';
import { eventually, receiptOf, withMiningPaused } from '../support/chain';
import { countsUpBlockByBlock, finalityAt, type FinalityRead } from '../support/finality';
import { newAccountWithWallet, newDepositAddress } from '../support/fixtures';
import { getHarness } from '../support/harness';
import { TOKEN, USDC, mine, newPayer, pokeScanner, waitForDeposits } from './helpers';

type DepositFinality = { transfers: TTransactionFinality[]; settlement: Array<TTransactionFinality & { leg: string }> };

describe("A deposit's live finality (GET /v2/accounts/{accountId}/deposits/{depositId})", () => {
  endsWithBooksChecked();

  test('its transfer counts up one confirmation per block the scanner reads, is final at the depth, moves back on a reorg, and its settlement legs follow', async () => {
    const h = await getHarness();
    const required = h.chain.chains.network(h.chainId).confirmations;
    const chain = h.chain.chains.get(h.chainId);
    const cred = await newApp();
    const { accountId } = await newAccountWithWallet(cred);
    const address = await newDepositAddress(cred, accountId);
    const payer = await newPayer(10n * USDC);

    const readDeposit = async (depositId: string): Promise<{ status: string; finality: DepositFinality }> => {
      const res = await call(`/v2/accounts/${accountId}/deposits/${depositId}`, { credential: cred });
      assert.equal(res.status, 200, res.text);
      return res.body.deposit;
    };

    const depositId = await withMiningPaused(async () => {
      const transfer = await chain.signTokenTransfer({
        from: payer,
        token: TOKEN,
        to: address.address as Address,
        amountAtomic: 10n * USDC,
      });
      await chain.broadcast(transfer);
      await mine(1);
      const mined = Number(BigInt((await receiptOf(transfer.txHash)).blockNumber));
      await pokeScanner();
      const txHash = transfer.txHash.toLowerCase();

      // The deposit the scanner made of it, as the partner lists it.
      const listed = await eventually(
        async (saw) => {
          const res = await call(`/v2/accounts/${accountId}/deposits`, { credential: cred });
          assert.equal(res.status, 200, res.text);
          saw(res.body.deposits);
          return (res.body.deposits as Array<{ id: string; sourceTransfer: { txHash: string } }>).find(
            (d) => d.sourceTransfer.txHash === txHash,
          );
        },
        'the deposit of the transfer listed',
        { mine: false },
      );
      const transferOf: FinalityRead = async (saw) => {
        const { finality } = await readDeposit(listed.id);
        saw(finality);
        return finality.transfers.find((t) => t.transactionHash === txHash);
      };

      // Block by block: one confirmation each, final at the network's depth, the estimate gone with it.
      const depth = required + 2;
      await countsUpBlockByBlock(transferOf, "the deposit's transfer", { minedAt: mined, depth });

      // A reorg mines the transfer one block later: the scanner reads the new chain and it counts one fewer.
      await createChainFaults(h.rpcUrl).remine(transfer.txHash as Hash, { blocksLater: 1 });
      await pokeScanner();
      const moved = await finalityAt(transferOf, "the deposit's transfer after the reorg", depth - 1);
      assert.deepEqual([moved.blockNumber, moved.finalized], [mined + 1, depth - 1 >= required], 'read in its new block');
      return listed.id;
    });

    // The deposit settles (blocks come again): its own transfer stays its only one, and each leg of its settlement is followed to final.
    await waitForDeposits(accountId, (d) => d.length === 1 && d[0]!.status === 'settled', { mine: true, what: 'the deposit settled' });
    const settled = await eventually(
      async (saw) => {
        const d = await readDeposit(depositId);
        saw(d.finality);
        return d.finality.settlement.length === 3 && d.finality.settlement.every((l) => l.finalized) ? d : undefined;
      },
      "every leg of the deposit's settlement final",
      { timeoutMs: 90_000 },
    );
    assert.equal(settled.status, 'settled');
    assert.equal(settled.finality.transfers.length, 1, 'its own transfer, once');
    assert.deepEqual(settled.finality.settlement.map((l) => l.leg).sort(), ['net', 'partner_fee', 'platform_fee']);
    for (const l of settled.finality.settlement) {
      assert.ok(l.blockNumber !== null && l.confirmations >= required && l.estimatedFinalAt === null, JSON.stringify(l));
    }
  });
});
