import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { AppCredential } from '../../src/domain/apps/apps';
import { checkLedger } from '../../src/domain/ledger/check';
import { sweepDust } from '../../src/domain/payments/dust';
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

type Symbol = 'USDC' | 'EURC';
const UNITS = (n: number) => BigInt(n) * 1_000_000n;
const COMBOS: Array<{ chainId: TwoChainId; symbol: Symbol }> = TWO_CHAINS.flatMap((c) =>
  (['USDC', 'EURC'] as const).map((symbol) => ({ chainId: c.chainId, symbol })),
);
let keys = 0;
const key = (what: string) => `${what}-${process.pid}-${Date.now()}-${(keys += 1)}`;

/** An account of the app whose settlement destination is a fresh wallet, settling `symbol` on `chainId`. */
async function merchantOn(cred: AppCredential, chainId: TwoChainId, symbol: Symbol) {
  const created = await call('/v2/accounts', { credential: cred, body: { externalUserId: uniqueUserId('mc') } });
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

async function createPayment(m: Merchant, amount: string, overrides: Record<string, unknown> = {}) {
  return call('/v2/payments', {
    credential: m.cred,
    headers: { 'idempotency-key': key('pay') },
    body: {
      intent: 'receive',
      amount,
      assetCode: m.symbol,
      chainId: m.chainId,
      destination: { type: 'upa', accountId: m.accountId },
      ...overrides,
    },
  });
}

async function waitForPayment(m: Merchant, id: string, what: string, predicate: (p: any) => boolean) {
  return eventuallyOnTwoChains(async (saw) => {
    const res = await call(`/v2/payments/${id}`, { credential: m.cred });
    assert.equal(res.status, 200, res.text);
    saw({ status: res.body.payment.status, stage: res.body.payment.stage, operationalState: res.body.payment.operationalState });
    return predicate(res.body.payment) ? res.body.payment : undefined;
  }, `${id} ${what}`);
}

describe('Two chains and two assets at once (production on 8453 and 1, USDC and EURC each)', () => {
  test('the config lists both networks with both assets, and the deposit and payment capabilities cover both chains', async () => {
    const cred = await newApp({ environment: 'production' });
    const res = await call('/v2/partners/config', { credential: cred });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.networks.map((n: any) => ({
        code: n.code,
        chainId: n.chainId,
        assets: n.supportedAssets.map((a: any) => [a.symbol, a.tokenAddress, a.decimals]),
      })),
      TWO_CHAINS.map((c) => ({
        code: c.code,
        chainId: c.chainId,
        assets: (['USDC', 'EURC'] as const).map((s) => [s, realToken(c.chainId, s), 6]),
      })),
    );
    const deposits = res.body.capabilities.depositAddresses.supportedNetworks
      .flatMap((n: any) => n.assets.map((a: any) => `${n.chainId}:${a.symbol}`))
      .sort();
    assert.deepEqual(deposits, ['1:EURC', '1:USDC', '8453:EURC', '8453:USDC']);
    assert.deepEqual([...res.body.capabilities.depositAddresses.supportedChainIds].sort(), [1, 8453]);
  });

  test("receive Payments on both chains in both assets are paid, settled to the merchant on the Payment's chain and token, and the books match the chain", async () => {
    const cred = await newApp({ environment: 'production' });
    // One after the other: payers are funded by one dev account per chain, whose nonces must not race.
    const runs = [];
    for (const { chainId, symbol } of COMBOS) {
      const m = await merchantOn(cred, chainId, symbol);
      const res = await createPayment(m, '7');
      assert.equal(res.status, 201, res.text);
      const p = res.body.payment;
      const escrow = p.funding.depositAddress.address as string;
      const payer = await newPayerOn(chainId, symbol, UNITS(7));
      await payOn(chainId, symbol, payer, escrow, UNITS(7));
      runs.push({ m, p, escrow });
    }
    for (const { m, p } of runs) {
      const done = await waitForPayment(m, p.id, 'succeeded and settled', (x) => x.status === 'succeeded');
      assert.equal(done.status, 'succeeded');
    }
    for (const { m, p, escrow } of runs) {
      const net = await eventuallyOnTwoChains(async () => {
        const b = await balanceOn(m.chainId, m.symbol, m.wallet);
        return b > 0n ? b : undefined;
      }, `the settlement of ${p.id} at the merchant on chain ${m.chainId} in ${m.symbol}`);
      // 7 less 1.5% fees (platform 1%, partner 0.5%), on the Payment's chain and token only.
      assert.equal(net, UNITS(7) - 105_000n);
      const other = COMBOS.filter((c) => c.chainId !== m.chainId || c.symbol !== m.symbol);
      for (const c of other) assert.equal(await balanceOn(c.chainId, c.symbol, m.wallet), 0n, `${m.wallet} on ${c.chainId} ${c.symbol}`);
      void escrow;
    }
    const h = await getHarness();
    assert.deepEqual((await checkLedger(h.db.prisma)).problems, []);
    const rec = await reconcileTwoChains();
    assert.deepEqual(
      rec.heads
        .map((x) => x.chainId)
        .filter((id) => id !== h.chainId)
        .sort(),
      [1, 8453],
    );
  });

  test('deposits on both chains in both assets are settled, each on its own chain and asset', async () => {
    const h = await getHarness();
    const cred = await newApp({ environment: 'production' });
    let n = 2;
    const runs = [];
    for (const { chainId, symbol } of COMBOS) {
      const m = await merchantOn(cred, chainId, symbol);
      const res = await call(`/v2/accounts/${m.accountId}/deposit-addresses`, { credential: cred, body: { chainId, assetSymbol: symbol } });
      assert.ok(res.status === 201 || res.status === 200, res.text);
      n += 1;
      const address = res.body.depositAddress.address as string;
      await payOn(chainId, symbol, await newPayerOn(chainId, symbol, UNITS(n)), address, UNITS(n));
      runs.push({ m, amount: UNITS(n), address });
    }
    for (const { m, amount } of runs) {
      const [d] = await eventuallyOnTwoChains(async (saw) => {
        const deposits = await h.db.prisma.deposit.findMany({ where: { accountId: m.accountId } });
        saw(deposits.map((x) => [x.chainId, x.tokenAddress, x.status, x.settlementStatus]));
        return deposits.length === 1 && deposits[0]!.status === 'settled' ? deposits : undefined;
      }, `the deposit of ${m.accountId} on ${m.chainId} in ${m.symbol} settled`);
      assert.equal(d!.chainId, m.chainId);
      assert.equal(d!.tokenAddress.toLowerCase(), realToken(m.chainId, m.symbol).toLowerCase());
      assert.equal(d!.amountAtomic.toString(), amount.toString());
    }
    // The same address on the other chain: recorded and listed on that chain, ignored, never settled.
    const { m, address } = runs[0]!;
    const other: TwoChainId = m.chainId === 8453 ? 1 : 8453;
    await payOn(other, m.symbol, await newPayerOn(other, m.symbol, UNITS(1)), address, UNITS(1));
    const wrong = await eventuallyOnTwoChains(async (saw) => {
      const res = await call(`/v2/accounts/${m.accountId}/deposits`, { credential: cred });
      assert.equal(res.status, 200, res.text);
      saw(res.body.deposits.map((x: any) => [x.amount.asset.chainId, x.status]));
      return res.body.deposits.find((x: any) => x.status === 'ignored');
    }, `the transfer on chain ${other} to ${address} listed`);
    assert.equal(wrong.amount.asset.chainId, other);
    assert.equal(wrong.amount.amount, UNITS(1).toString());
    assert.equal(wrong.settlement.status, 'not_required');
    assert.equal(wrong.settlement.reasonCode, 'asset_not_accepted');
    assert.equal(await balanceOn(other, m.symbol, address), UNITS(1), 'the funds stay at the address');
    assert.deepEqual((await checkLedger(h.db.prisma)).problems, []);
    await reconcileTwoChains();
  });

  test('bad combinations keep their 4xx: a chain or asset the environment does not offer, an asset the destination does not settle', async () => {
    const h = await getHarness();
    const cred = await newApp({ environment: 'production' });
    const m = await merchantOn(cred, 8453, 'USDC');
    const sandboxChain = await createPayment(m, '5', { chainId: h.chainId });
    assert.equal(sandboxChain.status, 424, sandboxChain.text);
    assert.equal(sandboxChain.body.error.code, 'chain_config_missing');
    const unknownAsset = await createPayment(m, '5', { assetCode: 'DAI' });
    assert.equal(unknownAsset.body.error.code, 'payment_method_not_supported', unknownAsset.text);
    const otherAsset = await createPayment(m, '5', { assetCode: 'EURC' });
    assert.equal(otherAsset.body.error.code, 'payment_method_not_supported', otherAsset.text);
    const otherChain = await createPayment(m, '5', { chainId: 1 });
    assert.equal(otherChain.body.error.code, 'payment_method_not_supported', otherChain.text);
    const deposit = await call(`/v2/accounts/${m.accountId}/deposit-addresses`, {
      credential: cred,
      body: { chainId: 8453, assetSymbol: 'DAI' },
    });
    assert.ok(deposit.status >= 400 && deposit.status < 500, deposit.text);
    const sandbox = await newApp();
    const sm = await call('/v2/accounts', { credential: sandbox, body: { externalUserId: uniqueUserId('mc') } });
    const sandboxDeposit = await call(`/v2/accounts/${sm.body.account.id}/deposit-addresses`, {
      credential: sandbox,
      body: { chainId: 8453 },
    });
    assert.equal(sandboxDeposit.status, 424, sandboxDeposit.text);
  });

  test('another asset, or the same address on the other chain, sent to a Payment is an incident recovered to its sender on that chain and token, never counted or lost', async () => {
    const h = await getHarness();
    const cred = await newApp({ environment: 'production' });
    const m = await merchantOn(cred, 8453, 'USDC');
    const created = await createPayment(m, '7');
    assert.equal(created.status, 201, created.text);
    const p = created.body.payment;
    const escrow = p.funding.depositAddress.address as string;
    const wrongAsset = await newPayerOn(8453, 'EURC', UNITS(5));
    const wrongChain = await newPayerOn(1, 'USDC', UNITS(4));
    await payOn(8453, 'EURC', wrongAsset, escrow, UNITS(5));
    await payOn(1, 'USDC', wrongChain, escrow, UNITS(4));
    const payer = await newPayerOn(8453, 'USDC', UNITS(7));
    await payOn(8453, 'USDC', payer, escrow, UNITS(7));
    const done = await waitForPayment(m, p.id, 'succeeded', (x) => x.status === 'succeeded');
    assert.equal(done.status, 'succeeded');
    const row = await h.db.prisma.payment.findUniqueOrThrow({ where: { id: p.id } });
    assert.equal(row.receivedAtomic.toFixed(), String(UNITS(7)), 'the foreign transfers are not counted');

    // The sweep that follows transfers no workflow takes (scheduled in the service) holds them at depth.
    const incidents = await eventuallyOnTwoChains(
      async (saw) => {
        await sweepDust({ prisma: h.db.prisma, chains: h.chain.chains });
        const res = await call(`/v2/payments/${p.id}/incidents`, { credential: cred });
        assert.equal(res.status, 200, res.text);
        saw(res.body.items);
        return res.body.items.length === 2 ? res.body.items : undefined;
      },
      'two incidents held',
      60_000,
    );
    const bySender = new Map(incidents.map((i: any) => [i.fromAddress, i]));
    const asset = (i: any) => ({
      kind: i.kind,
      amountAtomic: i.amount.amountAtomic,
      assetCode: i.amount.assetCode,
      chainId: i.amount.chainId,
      tokenAddress: i.amount.tokenAddress.toLowerCase(),
    });
    assert.deepEqual(asset(bySender.get(wrongAsset.address.toLowerCase())), {
      kind: 'foreign',
      amountAtomic: String(UNITS(5)),
      assetCode: 'EURC',
      chainId: 8453,
      tokenAddress: realToken(8453, 'EURC').toLowerCase(),
    });
    assert.deepEqual(asset(bySender.get(wrongChain.address.toLowerCase())), {
      kind: 'foreign',
      amountAtomic: String(UNITS(4)),
      assetCode: 'USDC',
      chainId: 1,
      tokenAddress: realToken(1, 'USDC').toLowerCase(),
    });
    await reconcileTwoChains();

    for (const incident of incidents) {
      const rec = await call(`/v2/payments/${p.id}/incident-recoveries`, {
        credential: cred,
        headers: { 'idempotency-key': key('recover') },
        body: { incidentId: incident.id },
      });
      assert.equal(rec.status, 201, rec.text);
      const lowerToken = (a: any) => ({ ...a, tokenAddress: a.tokenAddress.toLowerCase() });
      assert.deepEqual(
        lowerToken(rec.body.incidentRecovery.amount),
        lowerToken(incident.amount),
        'returned in the asset, on the chain, it came in',
      );
      await eventuallyOnTwoChains(async (saw) => {
        const list = await call(`/v2/payments/${p.id}/incident-recoveries`, { credential: cred });
        const item = list.body.items.find((r: any) => r.id === rec.body.incidentRecovery.id);
        saw(item?.status);
        return item?.status === 'confirmed';
      }, `recovery of ${incident.id} confirmed`);
    }
    assert.equal(await balanceOn(8453, 'EURC', wrongAsset.address), UNITS(5));
    assert.equal(await balanceOn(1, 'USDC', wrongChain.address), UNITS(4));
    assert.equal(await balanceOn(8453, 'EURC', escrow), 0n);
    assert.equal(await balanceOn(1, 'USDC', escrow), 0n);
    // The merchant was paid the Payment only, in its own asset.
    assert.equal(await balanceOn(8453, 'USDC', m.wallet), UNITS(7) - 105_000n);
    assert.deepEqual((await checkLedger(h.db.prisma)).problems, []);
    await reconcileTwoChains();
  });
});
