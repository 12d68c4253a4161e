import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Address } from 'viem';
import { call, newApp, uniqueUserId } from '../support/api-client';
import { getHarness } from '../support/harness';
import { newPayer, send, USDC, waitForDeposits, TOKEN } from '../deposits/helpers';
import { createPayment, newMerchant, newAccountWithWallet, newDepositAddress } from '../support/fixtures';
import { endsWithBooksChecked } from '../support/books';

/**
 * Finding 1: an address the service controls must never become a payout destination, and money
 * moving between the service's own addresses is never a new deposit (both invent value).
 */
describe('Service-controlled addresses', () => {
  endsWithBooksChecked();

  async function accountOf(cred: Awaited<ReturnType<typeof newApp>>) {
    const res = await call('/v2/accounts', { credential: cred, body: { externalUserId: uniqueUserId('svc') } });
    assert.equal(res.status, 201, res.text);
    return res.body.account.id as string;
  }

  test('refuses a deposit address, an escrow address, the treasury and a fee wallet as a connected wallet with 400 naming body.address', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const { accountId } = await newAccountWithWallet(cred);
    const deposit = await newDepositAddress(cred, accountId);
    const merchant = await newMerchant(cred);
    const escrow = (await createPayment(merchant)).body.payment.funding.depositAddress.address as string;
    const ours = [
      deposit.address,
      escrow,
      h.chain.custody.deriveAddress({ purpose: 'treasury', index: 0 }),
      h.chain.custody.deriveAddress({ purpose: 'fee', index: 0 }),
      h.chain.custody.deriveAddress({ purpose: 'fee', index: 1 }),
    ];
    const target = await accountOf(cred);
    for (const address of ours) {
      for (const spelling of [address.toLowerCase(), address]) {
        const res = await call(`/v2/accounts/${target}/connected-wallets`, {
          credential: cred,
          body: { chainId: h.chainId, address: spelling },
        });
        assert.equal(res.status, 400, `${spelling}: ${res.text}`);
        assert.equal(res.body.error.code, 'bad_request');
        assert.deepEqual(
          res.body.error.details.fields.map((f: { field: string }) => f.field),
          ['body.address'],
        );
      }
    }
    const bundle = await call(`/v2/accounts/${target}`, { credential: cred });
    assert.deepEqual(bundle.body.connectedWallets, []);
  });

  test('a settlement to a service-controlled destination registered before the check is refused and held, and pays nothing', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const { accountId } = await newAccountWithWallet(cred);
    const deposit = await newDepositAddress(cred, accountId);
    // As the service allowed before: the deposit address itself is the account's settlement destination.
    await h.db.prisma.connectedWallet.updateMany({ where: { accountId }, data: { address: deposit.address.toLowerCase() } });
    await h.db.prisma.settlementProfile.updateMany({ where: { accountId }, data: { destinationAddress: deposit.address.toLowerCase() } });
    const profile = await h.db.prisma.settlementProfile.findFirstOrThrow({ where: { accountId } });
    await h.db.prisma.settlementProfile.update({
      where: { id: profile.id },
      data: { snapshot: { ...(profile.snapshot as object), destinationAddress: deposit.address.toLowerCase() } },
    });
    const payer = await newPayer(100n * USDC);
    await send(payer, deposit.address, 100n * USDC);
    const [held] = await waitForDeposits(accountId, (d) => d.length >= 1 && d[0]!.status === 'requires_intervention', {
      mine: true,
      what: 'held',
    });
    assert.equal(held!.settlementReasonCode, 'settlement_destination_not_allowed');
    // Nothing moved, and no second deposit was made from the service's own transfer.
    const chain = h.chain.chains.get(h.chainId);
    assert.equal(await chain.getTokenBalance({ token: TOKEN, owner: deposit.address as Address }), 100n * USDC);
    assert.equal(await h.db.prisma.deposit.count({ where: { accountId } }), 1);
    const balances = await call(`/v2/accounts/${accountId}/balances`, { credential: cred });
    assert.deepEqual(
      balances.body.balances.map((b: Record<string, string>) => [b.settledAtomic, b.pendingAtomic]),
      [['0', String(100n * USDC)]],
    );
  });

  test("a transfer from one of the service's addresses to a deposit address is not a deposit", async () => {
    const h = await getHarness();
    const cred = await newApp();
    const { accountId } = await newAccountWithWallet(cred);
    const deposit = await newDepositAddress(cred, accountId);
    const merchant = await newMerchant(cred);
    const payment = (await createPayment(merchant)).body.payment;
    const escrowRow = await h.db.prisma.payment.findUniqueOrThrow({ where: { id: payment.id } });
    // Funds at an escrow (e.g. held for recovery), moved by the service to another of its own addresses.
    const escrowSigner = h.chain.custody.signer({ purpose: 'escrow', index: escrowRow.escrowIndex });
    const payer = await newPayer(5n * USDC);
    await send(payer, escrowSigner.address, 5n * USDC);
    await h.chain.chains.get(h.chainId).sendNative({ from: await newPayer(0n), to: escrowSigner.address, amountWei: 10n ** 16n });
    const moved = await h.chain.chains
      .get(h.chainId)
      .sendTokenTransfer({ from: escrowSigner, token: TOKEN, to: deposit.address as Address, amountAtomic: 5n * USDC });
    // A later ordinary deposit proves the scanner has read past the internal transfer.
    const later = await newPayer(2n * USDC);
    await send(later, deposit.address, 2n * USDC);
    const rows = await waitForDeposits(
      accountId,
      (d) => d.some((x) => x.fromAddress === later.address.toLowerCase() && x.status === 'settled'),
      {
        mine: true,
        what: 'the later deposit settled',
      },
    );
    assert.deepEqual(
      rows.map((r) => r.txHash).filter((t) => t === moved.toLowerCase()),
      [],
    );
    // Put the funds back where the books have them (the Payment's escrow): also an internal move (the
    // deposit address has no settlement running now, so this send can't take its nonce).
    const depositSigner = h.chain.custody.signer({
      purpose: 'deposit',
      index: (await h.db.prisma.depositAddress.findUniqueOrThrow({ where: { id: deposit.id } })).custodyIndex,
    });
    await h.chain.chains.get(h.chainId).sendNative({ from: await newPayer(0n), to: depositSigner.address, amountWei: 10n ** 16n });
    await h.chain.chains
      .get(h.chainId)
      .sendTokenTransfer({ from: depositSigner, token: TOKEN, to: escrowSigner.address, amountAtomic: 5n * USDC });
  });
});
