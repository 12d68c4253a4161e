import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { AppCredential } from '../../src/domain/apps/apps';
import type { TEnvironmentConfig } from '../../src/config/environments';
import { checkLedger } from '../../src/domain/ledger/check';
import { followVaultReceipts } from '../../src/domain/vaults/vault-receipts';
import { call, newApp, uniqueUserId } from '../support/api-client';
import { getHarness } from '../support/harness';
import {
  balanceOn,
  eventuallyOnTwoChains,
  newPayerOn,
  payOn,
  realToken,
  reconcileTwoChains,
  TWO_CHAINS,
  type TwoChainId,
} from '../support/two-chains';
import { sendCode, uniqueEmail } from '../vaults/support';

type Symbol = 'USDC' | 'EURC';
const UNITS = (n: number) => BigInt(n) * 1_000_000n;
const ALL_TOKENS = TWO_CHAINS.flatMap((c) => (['USDC', 'EURC'] as const).map((symbol) => ({ chainId: c.chainId as TwoChainId, symbol })));
/** One asset per chain, so that each case is its own (chain, token). */
const CASES: Array<{ chainId: TwoChainId; symbol: Symbol }> = [
  { chainId: 8453, symbol: 'USDC' },
  { chainId: 1, symbol: 'EURC' },
];
let keys = 0;
const key = (what: string) => `${what}-${process.pid}-${Date.now()}-${(keys += 1)}`;

/**
 * Production with vaults on both chains, for this file only: the harness's production has none (other
 * files assert that), so the module is turned on here and the environment put back afterwards.
 */
function withVaults(env: TEnvironmentConfig): TEnvironmentConfig {
  return {
    ...env,
    modules: [...env.modules, 'vaults'],
    vaults: {
      chainId: 8453,
      tokens: ['USDC', 'EURC'],
      networks: [{ chainId: 1, tokens: ['USDC', 'EURC'] }],
      spendLimit: { defaultAmountAtomic: '1000000000', maxAmountAtomic: '10000000000', currency: 'USD', decimals: 6 },
      resourceVersion: 1,
    },
  };
}

/** An account settling `symbol` on `chainId` to a fresh wallet. */
async function merchantOn(cred: AppCredential, chainId: TwoChainId, symbol: Symbol) {
  const created = await call('/v2/accounts', { credential: cred, body: { externalUserId: uniqueUserId('mcv') } });
  assert.equal(created.status, 201, created.text);
  const accountId = created.body.account.id as string;
  const wallet = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
  const w = await call(`/v2/accounts/${accountId}/connected-wallets`, { credential: cred, body: { chainId, address: wallet } });
  assert.equal(w.status, 201, w.text);
  const sp = await call(`/v2/accounts/${accountId}/settlement-profile`, {
    credential: cred,
    method: 'PUT',
    body: { connectedWalletId: w.body.connectedWallets[0].id, assetSymbol: symbol },
  });
  assert.equal(sp.status, 200, sp.text);
  return { cred, accountId, wallet, chainId, symbol };
}
type Merchant = Awaited<ReturnType<typeof merchantOn>>;

/** The account's vault with an active policy allowing every token of both chains. */
async function activeVaultOf(cred: AppCredential, accountId: string) {
  const created = await call(`/v2/accounts/${accountId}/vault`, { credential: cred, body: {} });
  assert.equal(created.status, 201, created.text);
  const email = uniqueEmail();
  const put = await call(`/v2/accounts/${accountId}/vault/policy`, {
    method: 'PUT',
    credential: cred,
    body: {
      period: 'fixed_30_day',
      allowedTokens: ALL_TOKENS.map((t) => ({ chainId: t.chainId, tokenAddress: realToken(t.chainId, t.symbol) })),
      managedApproval: { method: 'email_otp', email },
    },
  });
  assert.equal(put.status, 200, put.text);
  const code = await sendCode(cred, accountId, email);
  const ok = await call(`/v2/accounts/${accountId}/vault/policy/approval/verify`, { credential: cred, body: { code } });
  assert.equal(ok.status, 200, ok.text);
  return ok.body.vault as { id: string; address: string; chainId: number };
}

/** Sends `amount` of the asset into the vault on that chain and waits for its receipt to be posted. */
async function fundVault(vault: { id: string; address: string }, chainId: TwoChainId, symbol: Symbol, amount: bigint) {
  const h = await getHarness();
  await payOn(chainId, symbol, await newPayerOn(chainId, symbol, amount), vault.address, amount);
  await eventuallyOnTwoChains(async (saw) => {
    await followVaultReceipts({ prisma: h.db.prisma, chains: h.chain.chains });
    const receipts = await h.db.prisma.vaultReceipt.findMany({ where: { vaultId: vault.id, chainId } });
    saw(receipts.map((r) => [r.chainId, r.assetSymbol, r.status]));
    return receipts.some((r) => r.status === 'posted' && r.assetSymbol === symbol);
  }, `the receipt of ${vault.id} on chain ${chainId} in ${symbol} posted`);
}

async function createPayment(m: Merchant, amount: string) {
  const res = await call('/v2/payments', {
    credential: m.cred,
    headers: { 'idempotency-key': key('pay') },
    body: { intent: 'receive', amount, assetCode: m.symbol, chainId: m.chainId, destination: { type: 'upa', accountId: m.accountId } },
  });
  assert.equal(res.status, 201, res.text);
  return { payment: res.body.payment, secret: res.body.checkout.clientSecret as string };
}

async function waitForPayment(m: Merchant, id: string, what: string, predicate: (p: any) => boolean) {
  return eventuallyOnTwoChains(async (saw) => {
    const res = await call(`/v2/payments/${id}`, { credential: m.cred });
    assert.equal(res.status, 200, res.text);
    saw({ status: res.body.payment.status, stage: res.body.payment.stage });
    return predicate(res.body.payment) ? res.body.payment : undefined;
  }, `${id} ${what}`);
}

/** The payer account pays the Payment with its Vault option, as a client does. */
async function payFromVault(cred: AppCredential, payerAccountId: string, payment: { id: string }, secret: string) {
  const exchanged = await call('/v2/client/auth/exchange', { credential: cred, body: { accountId: payerAccountId } });
  assert.equal(exchanged.status, 200, exchanged.text);
  const headers = { authorization: `Bearer ${exchanged.body.accessToken}`, 'x-svc-payment-secret': secret };
  const read = await call(`/v2/client/me/payments/${payment.id}`, { headers });
  assert.equal(read.status, 200, read.text);
  const option = read.body.options.find((o: any) => o.paymentMethodType === 'vault');
  assert.ok(option?.execution, `a Vault option offered for ${payment.id}: ${read.text}`);
  const res = await call(`/v2/client/me/payments/${payment.id}/options/${option.id}/authorize`, {
    headers: { ...headers, 'idempotency-key': key('authorize') },
    body: { actionId: option.execution.actionId, proof: { type: 'managed_authorization', authorization: 'approved' } },
  });
  assert.equal(res.status, 200, res.text);
}

describe('Vaults on two chains at once (production on 8453 and 1, USDC and EURC each)', () => {
  let original: TEnvironmentConfig;
  before(async () => {
    const h = await getHarness();
    original = h.environments.environments.production;
    h.environments.environments.production = withVaults(original);
  });
  after(async () => {
    const h = await getHarness();
    h.environments.environments.production = original;
  });

  test('the config lists the vault tokens of both chains, and one vault per account holds balances on each chain and token', async () => {
    const cred = await newApp({ environment: 'production' });
    const config = await call('/v2/partners/config', { credential: cred });
    assert.equal(config.status, 200, config.text);
    assert.equal(config.body.capabilities.vaults.available, true, config.text);
    const listed = (t: any) => `${t.chainId}:${t.symbol}:${t.tokenAddress.toLowerCase()}:${t.decimals}`;
    assert.deepEqual(
      config.body.capabilities.vaults.tokens.map(listed).sort(),
      ALL_TOKENS.map((t) => `${t.chainId}:${t.symbol}:${realToken(t.chainId, t.symbol).toLowerCase()}:6`).sort(),
    );
    const account = await call('/v2/accounts', { credential: cred, body: { externalUserId: uniqueUserId('vc') } });
    const onEthereum = await call(`/v2/accounts/${account.body.account.id}/vault`, { credential: cred, body: { chainId: 1 } });
    assert.equal(onEthereum.status, 201, onEthereum.text);
    assert.equal(onEthereum.body.vault.chainId, 1);
    const elsewhere = await call(`/v2/accounts/${account.body.account.id}/vault`, { credential: cred, body: { chainId: 10 } });
    assert.equal(elsewhere.status, 424, elsewhere.text);
    assert.equal(elsewhere.body.error.code, 'chain_config_missing');
    assert.deepEqual(
      onEthereum.body.vault.balances.map((b: any) => `${b.chainId}:${b.symbol}:${b.balanceAtomic}`).sort(),
      ALL_TOKENS.map((t) => `${t.chainId}:${t.symbol}:0`).sort(),
    );
  });

  test("a vault funded on each chain pays a Payment on that chain, and a refund on each chain comes from the recipient's vault on that chain and token; books, chain and reconcile agree", async () => {
    const h = await getHarness();
    const cred = await newApp({ environment: 'production' });
    const payerAccount = await call('/v2/accounts', { credential: cred, body: { externalUserId: uniqueUserId('vp') } });
    assert.equal(payerAccount.status, 201, payerAccount.text);
    const payerId = payerAccount.body.account.id as string;
    const payerVault = await activeVaultOf(cred, payerId);
    const vaultIds = [payerVault.id];

    for (const { chainId, symbol } of CASES) {
      // Vault funding: the payer's one vault, funded on this chain, pays a Payment on this chain.
      await fundVault(payerVault, chainId, symbol, UNITS(10));
      const seller = await merchantOn(cred, chainId, symbol);
      const { payment, secret } = await createPayment(seller, '6');
      await payFromVault(cred, payerId, payment, secret);
      const paid = await waitForPayment(seller, payment.id, 'succeeded from the vault', (p) => p.status === 'succeeded');
      assert.equal(paid.status, 'succeeded');
      const op = await h.db.prisma.vaultFundingOperation.findFirstOrThrow({ where: { paymentId: payment.id } });
      assert.equal(op.chainId, chainId);
      assert.equal(op.tokenAddress.toLowerCase(), realToken(chainId, symbol).toLowerCase());
      await eventuallyOnTwoChains(
        async () =>
          (await h.db.prisma.vaultFundingOperation.findUniqueOrThrow({ where: { id: op.id } })).status === 'confirmed' ? true : undefined,
        `${op.id} confirmed`,
      );
      assert.equal(await balanceOn(chainId, symbol, payerVault.address), UNITS(4));

      // Refund: the recipient's vault, funded on this chain and token, pays back the payer of a settled Payment.
      const recipient = await merchantOn(cred, chainId, symbol);
      const recipientVault = await activeVaultOf(cred, recipient.accountId);
      vaultIds.push(recipientVault.id);
      await fundVault(recipientVault, chainId, symbol, UNITS(5));
      const sold = await createPayment(recipient, '3');
      const payer = await newPayerOn(chainId, symbol, UNITS(3));
      await payOn(chainId, symbol, payer, sold.payment.funding.depositAddress.address, UNITS(3));
      await waitForPayment(recipient, sold.payment.id, 'succeeded', (p) => p.status === 'succeeded');
      const refund = await call(`/v2/payments/${sold.payment.id}/refunds`, {
        credential: cred,
        headers: { 'idempotency-key': key('refund') },
        body: { amount: '2' },
      });
      assert.equal(refund.status, 201, refund.text);
      await eventuallyOnTwoChains(async (saw) => {
        const list = await call(`/v2/payments/${sold.payment.id}/refunds`, { credential: cred });
        const item = list.body.items.find((r: any) => r.id === refund.body.refund.id);
        saw(item?.status);
        return item?.status === 'confirmed' ? item : undefined;
      }, `refund ${refund.body.refund.id} confirmed`);
      assert.equal(await balanceOn(chainId, symbol, payer.address), UNITS(2));
      assert.equal(await balanceOn(chainId, symbol, recipientVault.address), UNITS(3));
      const row = await h.db.prisma.fundReturn.findFirstOrThrow({ where: { paymentId: sold.payment.id } });
      assert.equal(row.vaultId, recipientVault.id);
      assert.equal(row.chainId, chainId);
    }

    // The payer's vault holds on each chain only what that chain's funding left, nothing elsewhere.
    const read = await call(`/v2/accounts/${payerId}/vault`, { credential: cred });
    assert.equal(read.status, 200, read.text);
    const held = Object.fromEntries(read.body.vault.balances.map((b: any) => [`${b.chainId}:${b.symbol}`, b.balanceAtomic]));
    assert.deepEqual(held, { '8453:USDC': String(UNITS(4)), '8453:EURC': '0', '1:USDC': '0', '1:EURC': String(UNITS(4)) });
    assert.deepEqual((await checkLedger(h.db.prisma)).problems, []);
    // This file's vaults only: another file of the shard may leave a receipt on a chain nobody mines now.
    await eventuallyOnTwoChains(async (saw) => {
      await followVaultReceipts({ prisma: h.db.prisma, chains: h.chain.chains });
      const open = await h.db.prisma.vaultReceipt.findMany({ where: { vaultId: { in: vaultIds }, status: { not: 'posted' } } });
      saw(open.map((r) => [r.vaultId, r.chainId, r.status]));
      return open.length === 0 ? true : undefined;
    }, "every receipt of this test's vaults posted");
    await reconcileTwoChains();
  });
});
