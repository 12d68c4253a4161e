import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fundTestWallet } from '../../src/chain/sandbox';
import { NonceAlreadyUsedError } from '../../src/chain/types';
import { createHdCustody, type Custody } from '../../src/custody';
import { TEST_MNEMONIC, mined, startTestChain, type TestChain } from './helpers';

describe('token transfers', () => {
  let t: TestChain;
  let custody: Custody;
  before(async () => {
    t = await startTestChain();
    custody = createHdCustody({ mnemonic: TEST_MNEMONIC });
  });
  after(async () => {
    await t?.node.stop();
  });

  const payer = () => custody.signer({ purpose: 'escrow', index: 0 });
  const watched = () => custody.deriveAddress({ purpose: 'deposit', index: 1 });
  const unwatched = () => custody.deriveAddress({ purpose: 'deposit', index: 2 });

  test('a transfer is found with its tx hash, log index and amount, and only for watched recipients', async () => {
    await fundTestWallet({ rpcUrl: t.node.rpcUrl, address: payer().address, tokenAtomic: 100_000_000n });
    const fromBlock = (await t.chain.getBlockNumber()) + 1n;
    const toWatched = await mined(
      t.chain,
      await t.chain.sendTokenTransfer({ from: payer(), token: t.token, to: watched(), amountAtomic: 2_500_000n }),
    );
    const toOther = await mined(
      t.chain,
      await t.chain.sendTokenTransfer({ from: payer(), token: t.token, to: unwatched(), amountAtomic: 1n }),
    );
    const toBlock = await t.chain.getBlockNumber();

    const found = await t.chain.getTransfers({ token: t.token, to: [watched()], fromBlock, toBlock });
    assert.equal(found.length, 1);
    const [transfer] = found;
    assert.equal(transfer!.txHash, toWatched);
    assert.equal(transfer!.logIndex, 0);
    assert.equal(transfer!.amountAtomic, 2_500_000n);
    assert.equal(transfer!.from, payer().address);
    assert.equal(transfer!.to, watched());
    assert.equal(transfer!.token, t.token);
    assert.equal(transfer!.chainId, 31337);
    assert.equal(transfer!.blockNumber, fromBlock);

    const all = await t.chain.getTransfers({ token: t.token, to: undefined, fromBlock, toBlock });
    assert.deepEqual(
      all.map((x) => x.txHash),
      [toWatched, toOther],
    );
    assert.deepEqual(await t.chain.getTransfers({ token: t.token, to: [], fromBlock, toBlock }), []);
  });

  test('a sent token transfer moves the balance and reports confirmed once deep enough', async () => {
    const to = custody.deriveAddress({ purpose: 'treasury', index: 5 });
    const hash = await mined(t.chain, await t.chain.sendTokenTransfer({ from: payer(), token: t.token, to, amountAtomic: 777n }));
    assert.equal(await t.chain.getTokenBalance({ token: t.token, owner: to }), 777n);
    assert.equal(await t.chain.getTransactionStatus(hash, 2), 'pending');
    await t.mine(1);
    assert.equal(await t.chain.getTransactionStatus(hash, 2), 'confirmed');
    assert.equal(await t.chain.getTransactionStatus(`0x${'ab'.repeat(32)}`, 1), 'not_found');
  });

  test('balances read in one batch answer, in order, what each read alone answers, at the block asked for', async () => {
    const owners = Array.from({ length: 150 }, (_, i) => custody.deriveAddress({ purpose: 'treasury', index: 100 + i }));
    // Different amounts to a few of them, so an answer in the wrong order would show.
    for (const [i, amount] of [
      [0, 11n],
      [77, 22n],
      [149, 33n],
    ] as const) {
      await mined(t.chain, await t.chain.sendTokenTransfer({ from: payer(), token: t.token, to: owners[i]!, amountAtomic: amount }));
    }
    const at = await t.chain.getBlockNumber();
    await mined(t.chain, await t.chain.sendTokenTransfer({ from: payer(), token: t.token, to: owners[1]!, amountAtomic: 5n }));
    const batch = await t.chain.getTokenBalances({ token: t.token, owners, blockNumber: at });
    const alone = await Promise.all(owners.map((owner) => t.chain.getTokenBalance({ token: t.token, owner, blockNumber: at })));
    assert.deepEqual(batch, alone);
    assert.deepEqual([batch[0], batch[1], batch[77], batch[149]], [11n, 0n, 22n, 33n]);
  });

  test('a transfer of more than the balance is refused before anything is broadcast', async () => {
    const poor = custody.signer({ purpose: 'fee', index: 3 });
    await fundTestWallet({ rpcUrl: t.node.rpcUrl, address: poor.address });
    const nonce = await t.chain.getNonce(poor.address);
    await assert.rejects(t.chain.sendTokenTransfer({ from: poor, token: t.token, to: watched(), amountAtomic: 1n }), /balance/);
    assert.equal(await t.chain.getNonce(poor.address), nonce);
  });

  test('native currency is sent and its balance read in wei', async () => {
    const to = custody.deriveAddress({ purpose: 'fee', index: 9 });
    const hash = await mined(t.chain, await t.chain.sendNative({ from: payer(), to, amountWei: 123_456_789n }));
    assert.equal(await t.chain.getNativeBalance(to), 123_456_789n);
    assert.equal(await t.chain.getTransactionStatus(hash, 1), 'confirmed');
  });

  test('a token transfer signed while its recipient held tokens still lands after the recipient was emptied', async () => {
    // The estimate saw a warm balance slot; at execution the slot is zero again and costs a fresh store.
    const recipient = custody.signer({ purpose: 'treasury', index: 400 });
    await fundTestWallet({ rpcUrl: t.node.rpcUrl, address: recipient.address, tokenAtomic: 5_000n });
    const signed = await t.chain.signTokenTransfer({ from: payer(), token: t.token, to: recipient.address, amountAtomic: 1_000n });
    const elsewhere = custody.deriveAddress({ purpose: 'treasury', index: 401 });
    await mined(t.chain, await t.chain.sendTokenTransfer({ from: recipient, token: t.token, to: elsewhere, amountAtomic: 5_000n }));
    assert.equal(await t.chain.getTokenBalance({ token: t.token, owner: recipient.address }), 0n);

    const hash = await mined(t.chain, await t.chain.broadcast(signed));
    assert.equal(await t.chain.getTransactionStatus(hash, 1), 'confirmed');
    assert.equal(await t.chain.getTokenBalance({ token: t.token, owner: recipient.address }), 1_000n);
  });

  test('a retried settlement with the same nonce is never paid twice', async () => {
    const to = custody.deriveAddress({ purpose: 'treasury', index: 6 });
    const nonce = await t.chain.getNonce(payer().address);
    const request = { from: payer(), token: t.token, to, amountAtomic: 1_000_000n, nonce };

    // The hash is known before broadcasting, so a caller can record it first.
    const signed = await t.chain.signTokenTransfer(request);
    assert.equal(await t.chain.broadcast(signed), signed.txHash);
    // A retry re-broadcasting the recorded transaction is answered with the same hash...
    assert.equal(await t.chain.broadcast(signed), signed.txHash);
    assert.equal(await t.chain.broadcast(signed.serialized), signed.txHash);
    // ...and a retry that re-signs with the reserved nonce is refused instead of paying again.
    await assert.rejects(t.chain.sendTokenTransfer(request), (err: unknown) => {
      assert.ok(err instanceof NonceAlreadyUsedError);
      assert.equal(err.nonce, nonce);
      assert.equal(err.signer, payer().address);
      return true;
    });
    assert.equal(await t.chain.getTokenBalance({ token: t.token, owner: to }), 1_000_000n);
  });
});
