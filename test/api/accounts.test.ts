import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ZAccountBundle, ZAccountCapabilities } from '../../src/domain/accounts/account.schemas';
import { call, newApp, uniqueUserId } from '../support/api-client';
import { getHarness } from '../support/harness';

const BUNDLE_KEYS = ['account', 'connectedWallets', 'displayProfile', 'paymentHandle', 'settlementProfile'];
const ACCOUNT_KEYS = ['createdAt', 'externalUserId', 'id', 'metadata', 'paymentAcceptance', 'status', 'subjectType', 'updatedAt'];
const WALLET = '0x1111111111111111111111111111111111111111';
// anvil's dev account 1, checksummed, and with the case of one letter flipped (a typo EIP-55 catches).
const CHECKSUMMED = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const MISTYPED = '0x70997970c51812dc3A010C7d01b50e0d17dc79C8';

async function createAccount(cred: Awaited<ReturnType<typeof newApp>>, body: Record<string, unknown> = {}) {
  const res = await call('/v2/accounts', { credential: cred, body: { externalUserId: uniqueUserId(), ...body } });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

describe('Accounts (UPA)', () => {
  test('creates an account with a payment handle and emits account.created in the same transaction', async () => {
    const cred = await newApp();
    const h = await getHarness();
    const res = await call('/v2/accounts', {
      credential: cred,
      body: { externalUserId: 'alice@example', subjectType: 'individual', metadata: { tier: 'gold' } },
    });
    assert.equal(res.status, 201);
    ZAccountBundle.parse(res.body);
    assert.deepEqual(Object.keys(res.body).sort(), BUNDLE_KEYS);
    assert.deepEqual(Object.keys(res.body.account).sort(), ACCOUNT_KEYS);
    assert.match(res.body.account.id, /^acct_[A-Za-z0-9]+$/);
    assert.equal(res.body.account.externalUserId, 'alice@example');
    assert.equal(res.body.account.status, 'active');
    assert.deepEqual(res.body.account.metadata, { tier: 'gold' });
    assert.deepEqual(res.body.account.paymentAcceptance, { publicReceiveEnabled: false, version: 1 });
    assert.match(res.body.paymentHandle.id, /^handle_/);
    assert.equal(res.body.paymentHandle.accountId, res.body.account.id);
    assert.deepEqual(res.body.connectedWallets, []);
    assert.equal(res.body.settlementProfile, null);
    assert.deepEqual(res.body.displayProfile, { displayName: null, logoUrl: null, version: 0 });
    const events = await h.db.prisma.event.findMany({ where: { appId: cred.appId, resourceId: res.body.account.id } });
    assert.deepEqual(
      events.map((e) => e.name),
      ['account.created'],
    );
    assert.equal(events[0]?.accountId, res.body.account.id);
  });

  test('defaults subjectType to individual and metadata to {}', async () => {
    const cred = await newApp();
    const body = await createAccount(cred);
    assert.equal(body.account.subjectType, 'individual');
    assert.deepEqual(body.account.metadata, {});
  });

  test('refuses a duplicate externalUserId in the app environment with 409', async () => {
    const cred = await newApp();
    const first = await createAccount(cred, { externalUserId: 'dup-user' });
    const res = await call('/v2/accounts', { credential: cred, body: { externalUserId: 'dup-user' } });
    assert.equal(res.status, 409);
    assert.equal(res.body.error.code, 'account_already_exists');
    assert.equal(res.body.error.details.accountId, first.account.id);
  });

  test('refuses metadata beyond the limits and externalUserId over 128 characters', async () => {
    const cred = await newApp();
    const deep = await call('/v2/accounts', { credential: cred, body: { externalUserId: 'm1', metadata: { a: { b: { c: { d: 1 } } } } } });
    assert.equal(deep.status, 400);
    const long = await call('/v2/accounts', { credential: cred, body: { externalUserId: 'x'.repeat(129) } });
    assert.equal(long.status, 400);
    assert.equal(long.body.error.details.fields[0].field, 'body.externalUserId');
  });

  test('reads an account by id and by external user id', async () => {
    const cred = await newApp();
    const created = await createAccount(cred, { externalUserId: 'lookup user/1' });
    const byId = await call(`/v2/accounts/${created.account.id}`, { credential: cred });
    assert.equal(byId.status, 200);
    assert.deepEqual(byId.body, created);
    const byExternal = await call(`/v2/accounts/external/${encodeURIComponent('lookup user/1')}`, { credential: cred });
    assert.equal(byExternal.status, 200);
    assert.equal(byExternal.body.account.id, created.account.id);
    const missing = await call('/v2/accounts/external/nobody', { credential: cred });
    assert.equal(missing.status, 404);
  });

  test('reports account capabilities', async () => {
    const cred = await newApp();
    const created = await createAccount(cred);
    const res = await call(`/v2/accounts/${created.account.id}/capabilities`, { credential: cred });
    assert.equal(res.status, 200);
    ZAccountCapabilities.parse(res.body);
    assert.equal(res.body.capabilities.receivePayments.available, false);
    assert.equal(res.body.capabilities.receivePayments.disabledReason, 'settlement_profile_missing');
    assert.deepEqual(res.body.capabilities.connectedWallets.supportedChainIds, [31337]);
  });
});

describe('Display profile', () => {
  test('sets the profile with expectedVersion 0, then refuses a stale version with 409', async () => {
    const cred = await newApp();
    const h = await getHarness();
    const created = await createAccount(cred);
    const path = `/v2/accounts/${created.account.id}/display-profile`;
    const first = await call(path, {
      credential: cred,
      method: 'PUT',
      body: { displayName: 'Alice Shop', logoUrl: 'https://cdn.example.com/a.png', expectedVersion: 0, reason: 'initial branding' },
    });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body.displayProfile, { displayName: 'Alice Shop', logoUrl: 'https://cdn.example.com/a.png', version: 1 });
    const stale = await call(path, {
      credential: cred,
      method: 'PUT',
      body: { displayName: 'Other', expectedVersion: 0, reason: 'stale update here' },
    });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.error.code, 'version_conflict');
    assert.equal(stale.body.error.details.currentVersion, 1);
    const revisions = await h.db.prisma.displayProfileRevision.findMany({ where: { accountId: created.account.id } });
    assert.deepEqual(
      revisions.map((r) => [r.version, r.reason]),
      [[1, 'initial branding']],
    );
  });

  test('of concurrent updates with the same expectedVersion exactly one wins', async () => {
    const cred = await newApp();
    const created = await createAccount(cred);
    const path = `/v2/accounts/${created.account.id}/display-profile`;
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call(path, {
          credential: cred,
          method: 'PUT',
          body: { displayName: `Name ${i}`, expectedVersion: 0, reason: 'concurrent update test' },
        }),
      ),
    );
    assert.equal(results.filter((r) => r.status === 200).length, 1);
    assert.equal(results.filter((r) => r.status === 409).length, 9);
    const after = await call(`/v2/accounts/${created.account.id}`, { credential: cred });
    assert.equal(after.body.displayProfile.version, 1);
  });

  test('validates displayName, reason and expectedVersion limits', async () => {
    const cred = await newApp();
    const created = await createAccount(cred);
    const res = await call(`/v2/accounts/${created.account.id}/display-profile`, {
      credential: cred,
      method: 'PUT',
      body: { displayName: '', expectedVersion: -1, reason: 'short' },
    });
    assert.equal(res.status, 400);
    const fields = res.body.error.details.fields.map((f: { field: string }) => f.field).sort();
    assert.deepEqual(fields, ['body.displayName', 'body.expectedVersion', 'body.reason']);
  });
});

describe('Connected wallets and settlement profile', () => {
  test('registers an EVM wallet and makes it the settlement destination', async () => {
    const cred = await newApp();
    const created = await createAccount(cred);
    const id = created.account.id;
    const wallet = await call(`/v2/accounts/${id}/connected-wallets`, {
      credential: cred,
      body: { chainId: 31337, address: WALLET, label: 'Treasury' },
    });
    assert.equal(wallet.status, 201, wallet.text);
    const w = wallet.body.connectedWallets[0];
    assert.match(w.id, /^wallet_/);
    assert.equal(w.ownershipVerificationStatus, 'unverified');
    assert.equal(w.ownershipVerificationMethod, 'eip712_signature');
    assert.equal(w.settlementProfileId, null);

    const profile = await call(`/v2/accounts/${id}/settlement-profile`, {
      credential: cred,
      method: 'PUT',
      body: { connectedWalletId: w.id },
    });
    assert.equal(profile.status, 200, profile.text);
    const sp = profile.body.settlementProfile;
    assert.match(sp.id, /^settle_/);
    assert.match(sp.settlementDestinationId, /^destination_/);
    assert.equal(sp.destinationType, 'connected_wallet');
    assert.equal(sp.destinationAddress, WALLET);
    assert.equal(sp.assetSymbol, 'USDC');
    assert.equal(sp.version, 1);
    assert.equal(profile.body.connectedWallets[0].settlementProfileId, sp.id);

    const caps = await call(`/v2/accounts/${id}/capabilities`, { credential: cred });
    assert.equal(caps.body.capabilities.receivePayments.available, true);

    // A second change is a new version with a new destination id.
    const again = await call(`/v2/accounts/${id}/settlement-profile`, {
      credential: cred,
      method: 'PUT',
      body: { connectedWalletId: w.id },
    });
    assert.equal(again.body.settlementProfile.version, 2);
    assert.notEqual(again.body.settlementProfile.settlementDestinationId, sp.settlementDestinationId);
  });

  test('refuses a wallet on an unconfigured chain with 424 chain_config_missing', async () => {
    const cred = await newApp();
    const created = await createAccount(cred);
    const res = await call(`/v2/accounts/${created.account.id}/connected-wallets`, {
      credential: cred,
      body: { chainId: 999999, address: WALLET },
    });
    assert.equal(res.status, 424);
    assert.equal(res.body.error.code, 'chain_config_missing');
  });

  test('refuses a mixed-case address with a wrong EIP-55 checksum with 400 naming body.address, and stores nothing', async () => {
    const cred = await newApp();
    const created = await createAccount(cred);
    const res = await call(`/v2/accounts/${created.account.id}/connected-wallets`, {
      credential: cred,
      body: { chainId: 31337, address: MISTYPED },
    });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 'bad_request');
    assert.deepEqual(
      res.body.error.details.fields.map((f: { field: string }) => f.field),
      ['body.address'],
    );
    assert.match(res.body.error.details.fields[0].message, /EIP-55 checksum/);
    const h = await getHarness();
    assert.equal(await h.db.prisma.connectedWallet.count({ where: { accountId: created.account.id } }), 0);
  });

  test('accepts an all-lowercase or all-uppercase address and keeps and answers it checksummed, in the wallet and the settlement profile', async () => {
    const h = await getHarness();
    const cred = await newApp();
    for (const spelling of [CHECKSUMMED.toLowerCase(), `0x${CHECKSUMMED.slice(2).toUpperCase()}`]) {
      const id = (await createAccount(cred)).account.id;
      const wallet = await call(`/v2/accounts/${id}/connected-wallets`, { credential: cred, body: { chainId: 31337, address: spelling } });
      assert.equal(wallet.status, 201, wallet.text);
      assert.equal(wallet.body.connectedWallets[0].address, CHECKSUMMED);
      const profile = await call(`/v2/accounts/${id}/settlement-profile`, {
        credential: cred,
        method: 'PUT',
        body: { connectedWalletId: wallet.body.connectedWallets[0].id },
      });
      assert.equal(profile.status, 200, profile.text);
      assert.equal(profile.body.settlementProfile.destinationAddress, CHECKSUMMED);
      assert.equal(profile.body.settlementProfile.snapshot.destinationAddress, CHECKSUMMED);

      const rows = await h.db.prisma.connectedWallet.findMany({ where: { accountId: id } });
      assert.deepEqual(
        rows.map((r) => r.address),
        [CHECKSUMMED],
      );
      const stored = await h.db.prisma.settlementProfile.findUniqueOrThrow({ where: { accountId: id } });
      assert.equal(stored.destinationAddress, CHECKSUMMED);
      assert.equal((stored.snapshot as { destinationAddress: string }).destinationAddress, CHECKSUMMED);
    }
  });

  test('the same wallet in another spelling is 409 conflict, also against a lowercase row stored before checksumming', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const id = (await createAccount(cred)).account.id;
    const first = await call(`/v2/accounts/${id}/connected-wallets`, { credential: cred, body: { chainId: 31337, address: CHECKSUMMED } });
    assert.equal(first.status, 201, first.text);
    for (const spelling of [CHECKSUMMED, CHECKSUMMED.toLowerCase(), `0x${CHECKSUMMED.slice(2).toUpperCase()}`]) {
      const again = await call(`/v2/accounts/${id}/connected-wallets`, { credential: cred, body: { chainId: 31337, address: spelling } });
      assert.equal(again.status, 409, `${spelling}: ${again.text}`);
      assert.equal(again.body.error.code, 'conflict');
    }

    // As written before checksumming: lowercase in the row.
    const legacy = (await createAccount(cred)).account.id;
    await h.db.prisma.connectedWallet.create({
      data: {
        id: `wallet_legacy${Date.now()}`,
        accountId: legacy,
        kind: 'evm',
        chainId: 31337,
        address: CHECKSUMMED.toLowerCase(),
        status: 'active',
        ownershipVerificationStatus: 'unverified',
        ownershipVerificationMethod: 'eip712_signature',
      },
    });
    const clash = await call(`/v2/accounts/${legacy}/connected-wallets`, {
      credential: cred,
      body: { chainId: 31337, address: CHECKSUMMED },
    });
    assert.equal(clash.status, 409, clash.text);
    assert.equal(await h.db.prisma.connectedWallet.count({ where: { accountId: legacy } }), 1);
    assert.equal(await h.db.prisma.connectedWallet.count({ where: { accountId: id } }), 1);
  });

  test('refuses an unknown wallet id as settlement destination with 404', async () => {
    const cred = await newApp();
    const created = await createAccount(cred);
    const res = await call(`/v2/accounts/${created.account.id}/settlement-profile`, {
      credential: cred,
      method: 'PUT',
      body: { connectedWalletId: 'wallet_nope' },
    });
    assert.equal(res.status, 404);
  });
});
