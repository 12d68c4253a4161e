import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Address, Hash } from 'viem';
import { fundTestWallet } from '../../src/chain/sandbox';
import { createHdCustody, type Custody } from '../../src/custody';
import { TEST_MNEMONIC, mined, startTestChain, type TestChain } from './helpers';

describe('verifying a transfer', () => {
  let t: TestChain;
  let custody: Custody;
  let recipient: Address;
  before(async () => {
    t = await startTestChain();
    custody = createHdCustody({ mnemonic: TEST_MNEMONIC });
    recipient = custody.deriveAddress({ purpose: 'deposit', index: 42 });
    await fundTestWallet({ rpcUrl: t.node.rpcUrl, address: payer().address, tokenAtomic: 1_000_000_000n });
  });
  after(async () => {
    await t?.node.stop();
  });

  const payer = () => custody.signer({ purpose: 'escrow', index: 7 });
  const pay = async (amountAtomic: bigint): Promise<Hash> =>
    mined(t.chain, await t.chain.sendTokenTransfer({ from: payer(), token: t.token, to: recipient, amountAtomic }));

  test('a transfer is pending until the required confirmations are mined, then confirmed', async () => {
    const txHash = await pay(5_000_000n);
    const query = { txHash, logIndex: 0, token: t.token, to: recipient, confirmations: 3 };

    assert.deepEqual(await t.chain.verifyTransfer(query), { status: 'pending', confirmations: 1 });
    await t.mine(1);
    assert.deepEqual(await t.chain.verifyTransfer(query), { status: 'pending', confirmations: 2 });
    await t.mine(1);
    const result = await t.chain.verifyTransfer(query);
    assert.equal(result.status, 'confirmed');
    assert.ok(result.status === 'confirmed');
    assert.equal(result.confirmations, 3);
    assert.equal(result.transfer.txHash, txHash);
    assert.equal(result.transfer.amountAtomic, 5_000_000n);
    assert.equal(result.transfer.to, recipient);
    assert.equal(result.transfer.from, payer().address);
  });

  test('a transfer reorged away answers not_found, even after the chain has grown past it', async () => {
    const snapshot = await t.rpc('evm_snapshot');
    const txHash = await pay(9_000_000n);
    const query = { txHash, logIndex: 0, token: t.token, to: recipient, confirmations: 2 };
    assert.equal((await t.chain.verifyTransfer(query)).status, 'pending');

    await t.rpc('evm_revert', [snapshot]);
    await t.mine(5); // other blocks now occupy the transfer's height and beyond
    assert.deepEqual(await t.chain.verifyTransfer(query), { status: 'not_found', reason: 'unknown_transaction' });
    assert.equal(await t.chain.getTransactionStatus(txHash, 2), 'not_found');
  });

  test('a real transfer claimed for another recipient, token or log index answers not_found', async () => {
    const txHash = await pay(1n);
    const query = { txHash, logIndex: 0, token: t.token, to: recipient, confirmations: 1 };
    assert.equal((await t.chain.verifyTransfer(query)).status, 'confirmed');
    const other = custody.deriveAddress({ purpose: 'deposit', index: 43 });
    assert.deepEqual(await t.chain.verifyTransfer({ ...query, to: other }), {
      status: 'not_found',
      reason: 'not_a_matching_transfer',
    });
    assert.deepEqual(await t.chain.verifyTransfer({ ...query, token: other }), {
      status: 'not_found',
      reason: 'not_a_matching_transfer',
    });
    assert.deepEqual(await t.chain.verifyTransfer({ ...query, logIndex: 1 }), { status: 'not_found', reason: 'no_such_log' });
  });

  test('an unknown transaction hash answers not_found', async () => {
    const result = await t.chain.verifyTransfer({
      txHash: `0x${'12'.repeat(32)}`,
      logIndex: 0,
      token: t.token,
      to: recipient,
      confirmations: 1,
    });
    assert.deepEqual(result, { status: 'not_found', reason: 'unknown_transaction' });
  });

  test('a broadcast transfer not yet mined answers pending with zero confirmations', async () => {
    await t.rpc('evm_setAutomine', [false]);
    try {
      const txHash = await t.chain.sendTokenTransfer({ from: payer(), token: t.token, to: recipient, amountAtomic: 3n });
      const query = { txHash, logIndex: 0, token: t.token, to: recipient, confirmations: 1 };
      assert.deepEqual(await t.chain.verifyTransfer(query), { status: 'pending', confirmations: 0 });
      assert.equal(await t.chain.getTransactionStatus(txHash, 1), 'pending');
      await t.mine(1);
      assert.equal((await t.chain.verifyTransfer(query)).status, 'confirmed');
    } finally {
      await t.rpc('evm_setAutomine', [true]);
    }
  });
});
