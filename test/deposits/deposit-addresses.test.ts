import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ZDepositAddress, ZDepositAddressList, ZDepositList } from '../../src/domain/deposits/deposit.schemas';
import { call, newApp, uniqueUserId } from '../support/api-client';
import { getHarness } from '../support/harness';
import { newAccountWithWallet } from '../support/fixtures';

const ADDRESS_KEYS = [
  'accountId',
  'address',
  'assetSymbol',
  'chainId',
  'createdAt',
  'decimals',
  'id',
  'networkCode',
  'status',
  'tokenAddress',
  'updatedAt',
];

describe('Deposit addresses', () => {
  test('creates a deposit address derived from custody (purpose deposit, the row sequence) for the network default asset', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const { accountId } = await newAccountWithWallet(cred);
    const res = await call(`/v2/accounts/${accountId}/deposit-addresses`, { credential: cred, body: { chainId: h.chainId } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(Object.keys(res.body), ['depositAddress']);
    const a = ZDepositAddress.parse(res.body.depositAddress);
    assert.deepEqual(Object.keys(res.body.depositAddress).sort(), ADDRESS_KEYS);
    assert.match(a.id, /^deposit_addr_[A-Za-z0-9]+$/);
    assert.equal(a.accountId, accountId);
    assert.equal(a.chainId, h.chainId);
    assert.equal(a.networkCode, 'anvil');
    assert.equal(a.assetSymbol, 'USDC');
    assert.equal(a.tokenAddress, '0xf1108D9fDF3d265B59Bf6Ce7Bf240f99c071ffF5');
    assert.equal(a.decimals, 6);
    assert.equal(a.status, 'active');
    const row = await h.db.prisma.depositAddress.findUniqueOrThrow({ where: { id: a.id } });
    assert.equal(a.address, h.chain.custody.deriveAddress({ purpose: 'deposit', index: row.custodyIndex }).toLowerCase());
    assert.equal(row.appId, cred.appId);
    assert.equal(row.platformFeeBps, 100);
    assert.equal(row.partnerFeeBps, 50);
  });

  test('answers the existing address (200) for the same account, network and asset unless newAddress is true', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const { accountId } = await newAccountWithWallet(cred);
    const first = await call(`/v2/accounts/${accountId}/deposit-addresses`, { credential: cred, body: { chainId: h.chainId } });
    assert.equal(first.status, 201);
    const again = await call(`/v2/accounts/${accountId}/deposit-addresses`, {
      credential: cred,
      body: { chainId: h.chainId, assetSymbol: 'USDC' },
    });
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, first.body);
    const fresh = await call(`/v2/accounts/${accountId}/deposit-addresses`, {
      credential: cred,
      body: { chainId: h.chainId, newAddress: true },
    });
    assert.equal(fresh.status, 201);
    assert.notEqual(fresh.body.depositAddress.id, first.body.depositAddress.id);
    assert.notEqual(fresh.body.depositAddress.address, first.body.depositAddress.address);
    // Without newAddress the first (oldest) address stays the answer.
    const later = await call(`/v2/accounts/${accountId}/deposit-addresses`, { credential: cred, body: { chainId: h.chainId } });
    assert.equal(later.body.depositAddress.id, first.body.depositAddress.id);
    assert.equal(await h.db.prisma.depositAddress.count({ where: { accountId } }), 2);
  });

  test('makes one address for concurrent first requests', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const { accountId } = await newAccountWithWallet(cred);
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        call(`/v2/accounts/${accountId}/deposit-addresses`, { credential: cred, body: { chainId: h.chainId } }),
      ),
    );
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 200, 200, 200, 201]);
    assert.equal(new Set(results.map((r) => r.body.depositAddress.id)).size, 1);
    assert.equal(await h.db.prisma.depositAddress.count({ where: { accountId } }), 1);
  });

  test('honours Idempotency-Key: an identical retry replays, the same key with another body is a conflict', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const { accountId } = await newAccountWithWallet(cred);
    const headers = { 'Idempotency-Key': `dep-addr-${uniqueUserId()}` };
    const body = { chainId: h.chainId, newAddress: true };
    const first = await call(`/v2/accounts/${accountId}/deposit-addresses`, { credential: cred, body, headers });
    assert.equal(first.status, 201);
    const replay = await call(`/v2/accounts/${accountId}/deposit-addresses`, { credential: cred, body, headers });
    assert.equal(replay.status, 201);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replay.body, first.body);
    assert.equal(await h.db.prisma.depositAddress.count({ where: { accountId } }), 1);
    const conflict = await call(`/v2/accounts/${accountId}/deposit-addresses`, { credential: cred, body: { chainId: h.chainId }, headers });
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.error.code, 'idempotency_conflict');
  });

  test('answers 424 chain_config_missing for a network the environment does not configure', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const { accountId } = await newAccountWithWallet(cred);
    const res = await call(`/v2/accounts/${accountId}/deposit-addresses`, { credential: cred, body: { chainId: 1 } });
    assert.equal(res.status, 424);
    assert.equal(res.body.error.code, 'chain_config_missing');
    // Production configures no network at all.
    const prod = await newApp({ environment: 'production' });
    const acct = await call('/v2/accounts', { credential: prod, body: { externalUserId: uniqueUserId() } });
    const prodRes = await call(`/v2/accounts/${acct.body.account.id}/deposit-addresses`, {
      credential: prod,
      body: { chainId: h.chainId },
    });
    assert.equal(prodRes.status, 424);
    assert.equal(prodRes.body.error.code, 'chain_config_missing');
    assert.equal(await h.db.prisma.depositAddress.count({ where: { accountId: { in: [accountId, acct.body.account.id] } } }), 0);
  });

  test('refuses an account without a settlement profile with 409 settlement_profile_missing', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const acct = await call('/v2/accounts', { credential: cred, body: { externalUserId: uniqueUserId() } });
    const res = await call(`/v2/accounts/${acct.body.account.id}/deposit-addresses`, { credential: cred, body: { chainId: h.chainId } });
    assert.equal(res.status, 409);
    assert.deepEqual(res.body.error, {
      code: 'settlement_profile_missing',
      message: 'The account needs a settlement profile before it can receive deposits',
      details: { reasonCode: 'settlement_profile_missing' },
    });
  });

  test('refuses an asset the network does not support with 422 and a malformed body with 400', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const { accountId } = await newAccountWithWallet(cred);
    const asset = await call(`/v2/accounts/${accountId}/deposit-addresses`, {
      credential: cred,
      body: { chainId: h.chainId, assetSymbol: 'DOGE' },
    });
    assert.equal(asset.status, 422);
    assert.equal(asset.body.error.code, 'payment_method_not_supported');
    const bad = await call(`/v2/accounts/${accountId}/deposit-addresses`, { credential: cred, body: { chainId: 'anvil', extra: 1 } });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.error.details.fields.map((f: { field: string }) => f.field).sort(), ['body', 'body.chainId']);
  });

  test("needs the v2:deposit_addresses scope and hides other apps' accounts", async () => {
    const h = await getHarness();
    const cred = await newApp();
    const { accountId } = await newAccountWithWallet(cred);
    const narrow = await newApp({ scopes: ['v2:accounts'] });
    const forbidden = await call(`/v2/accounts/${accountId}/deposits`, { credential: narrow });
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.body.error.code, 'forbidden');
    const other = await newApp();
    for (const path of [`/v2/accounts/${accountId}/deposits`, `/v2/accounts/${accountId}/deposit-addresses`]) {
      const res = await call(path, { credential: other });
      assert.equal(res.status, 404, path);
    }
    const create = await call(`/v2/accounts/${accountId}/deposit-addresses`, { credential: other, body: { chainId: h.chainId } });
    assert.equal(create.status, 404);
  });

  test("reads an address by id and lists the account's addresses newest first with a cursor", async () => {
    const h = await getHarness();
    const cred = await newApp();
    const { accountId } = await newAccountWithWallet(cred);
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const res = await call(`/v2/accounts/${accountId}/deposit-addresses`, {
        credential: cred,
        body: { chainId: h.chainId, newAddress: true },
      });
      ids.push(res.body.depositAddress.id);
    }
    const one = await call(`/v2/accounts/${accountId}/deposit-addresses/${ids[1]}`, { credential: cred });
    assert.equal(one.status, 200);
    assert.equal(one.body.depositAddress.id, ids[1]);
    const missing = await call(`/v2/accounts/${accountId}/deposit-addresses/deposit_addr_nope`, { credential: cred });
    assert.equal(missing.status, 404);
    const page1 = await call(`/v2/accounts/${accountId}/deposit-addresses?limit=2`, { credential: cred });
    ZDepositAddressList.parse(page1.body);
    assert.equal(page1.body.accountId, accountId);
    assert.deepEqual(
      page1.body.depositAddresses.map((a: { id: string }) => a.id),
      [ids[2], ids[1]],
    );
    const page2 = await call(`/v2/accounts/${accountId}/deposit-addresses?limit=2&cursor=${encodeURIComponent(page1.body.nextCursor)}`, {
      credential: cred,
    });
    assert.deepEqual(
      page2.body.depositAddresses.map((a: { id: string }) => a.id),
      [ids[0]],
    );
    assert.equal(page2.body.nextCursor, null);
  });

  test('lists no deposits for a new account, validates the query and 404s an unknown deposit', async () => {
    const cred = await newApp();
    const { accountId } = await newAccountWithWallet(cred);
    const empty = await call(`/v2/accounts/${accountId}/deposits`, { credential: cred });
    assert.equal(empty.status, 200);
    assert.deepEqual(ZDepositList.parse(empty.body), { accountId, deposits: [], nextCursor: null });
    for (const query of ['limit=101', 'limit=0', 'status=pending', 'cursor=forged.cursor']) {
      const res = await call(`/v2/accounts/${accountId}/deposits?${query}`, { credential: cred });
      assert.equal(res.status, 400, query);
      assert.equal(res.body.error.code, 'bad_request');
    }
    const missing = await call(`/v2/accounts/${accountId}/deposits/deposit_0123456789abcdef`, { credential: cred });
    assert.equal(missing.status, 404);
  });
});
