import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, newApp } from '../support/api-client';
import { getHarness } from '../support/harness';
import { ZVault, ZVaultAuditEventList } from '../../src/domain/vaults/vault.schemas';
import { activeVault, policyBody, requestCode, sendCode, uniqueEmail, USDC } from './support';
import { newAccount, newVault } from '../support/fixtures';

/** The id of the transaction that last wrote the row. */
export async function writerOf(table: 'vaults' | 'vault_audit_events' | 'vault_policies' | 'events', id: string): Promise<string> {
  const h = await getHarness();
  const rows = await h.db.prisma.$queryRawUnsafe<Array<{ x: string }>>(`SELECT xmin::text AS x FROM ${table} WHERE id = $1`, id);
  return rows[0]!.x;
}

const routes = (accountId: string) => [
  { method: 'POST', path: `/v2/accounts/${accountId}/vault`, body: {} },
  { method: 'GET', path: `/v2/accounts/${accountId}/vault` },
  { method: 'PUT', path: `/v2/accounts/${accountId}/vault/policy`, body: policyBody('a@example.com') },
  { method: 'POST', path: `/v2/accounts/${accountId}/vault/policy/approval`, body: {} },
  { method: 'POST', path: `/v2/accounts/${accountId}/vault/policy/approval/verify`, body: { code: '123456' } },
  { method: 'GET', path: `/v2/accounts/${accountId}/vault/audit-events` },
];

describe('Vaults: access', () => {
  test('every vault route answers 403 forbidden to a credential without the v2:vaults scope', async () => {
    const cred = await newApp({ scopes: ['v2:accounts'] });
    const accountId = await newAccount(cred);
    for (const r of routes(accountId)) {
      const res = await call(r.path, { method: r.method, credential: cred, body: r.body });
      assert.equal(res.status, 403, `${r.method} ${r.path}`);
      assert.equal(res.body.error.code, 'forbidden');
      assert.equal(res.body.error.details.requiredScope, 'v2:vaults');
    }
  });

  test('every vault route answers 424 chain_config_missing where the vaults module is not enabled (production)', async () => {
    const cred = await newApp({ environment: 'production' });
    const accountId = await newAccount(cred);
    for (const r of routes(accountId)) {
      const res = await call(r.path, { method: r.method, credential: cred, body: r.body });
      assert.equal(res.status, 424, `${r.method} ${r.path}: ${res.text}`);
      assert.equal(res.body.error.code, 'chain_config_missing');
    }
    const h = await getHarness();
    assert.equal(await h.db.prisma.vault.count({ where: { appId: cred.appId } }), 0);
  });

  test('answers 401 without credentials and 404 for an account of another app or an account without a vault', async () => {
    const { accountId } = await newVault();
    const unauth = await call(`/v2/accounts/${accountId}/vault`);
    assert.equal(unauth.status, 401);
    const other = await newApp();
    for (const path of [`/v2/accounts/${accountId}/vault`, `/v2/accounts/${accountId}/vault/audit-events`]) {
      const res = await call(path, { credential: other });
      assert.equal(res.status, 404, path);
      assert.equal(res.body.error.code, 'not_found');
    }
    const cred = await newApp();
    const bare = await newAccount(cred);
    const none = await call(`/v2/accounts/${bare}/vault`, { credential: cred });
    assert.equal(none.status, 404);
    assert.equal(none.body.error.message, 'Vault not found');
  });

  test('the partner config reports the vaults module and capability from the environment (module on, mail ready, tokens, limits)', async () => {
    const cred = await newApp();
    const res = await call('/v2/partners/config', { credential: cred });
    assert.equal(res.status, 200);
    const module = res.body.modules.find((m: { id: string }) => m.id === 'vaults');
    assert.equal(module.operational, true);
    assert.equal(module.available, true);
    const v = res.body.capabilities.vaults;
    assert.equal(v.available, true);
    assert.equal(v.availableToCredential, true);
    assert.deepEqual(v.managedApproval, { method: 'email_otp', ready: true, disabledReason: null });
    assert.deepEqual(v.spendLimit, {
      defaultAmountAtomic: '1000000000',
      maxAmountAtomic: '10000000000',
      currency: 'USD',
      decimals: 6,
      period: 'fixed_30_day',
    });
    assert.deepEqual(v.tokens, [{ symbol: 'USDC', chainId: 31337, tokenAddress: USDC, decimals: 6 }]);
    assert.equal(v.resourceVersion, 1);
    assert.deepEqual(v.ownershipModes, { external: false, stableyard: true });

    const noScope = await call('/v2/partners/config', { credential: await newApp({ scopes: ['v2:accounts'] }) });
    assert.equal(noScope.body.capabilities.vaults.available, false);
    assert.equal(noScope.body.capabilities.vaults.disabledReason, 'credential_scope_missing');
    assert.equal(noScope.body.capabilities.vaults.managedApproval.ready, false);
    const prod = await call('/v2/partners/config', { credential: await newApp({ environment: 'production' }) });
    assert.equal(prod.body.capabilities.vaults.entitled, false);
    assert.equal(prod.body.capabilities.vaults.disabledReason, 'not_entitled');
    assert.deepEqual(prod.body.capabilities.vaults.tokens, []);
  });
});

describe('Vaults: create and read', () => {
  test('a body of JSON null is refused 400 naming the body, as the document has it (an object), not taken as no body', async () => {
    const { cred, accountId } = await newVault();
    for (const path of ['/vault', '/vault/policy', '/vault/policy/approval', '/vault/policy/approval/verify']) {
      const r = await call(`/v2/accounts/${accountId}${path}`, {
        method: path === '/vault/policy' ? 'PUT' : 'POST',
        credential: cred,
        rawBody: 'null',
        headers: { 'Content-Type': 'application/json', 'Idempotency-Key': `null-body-${path}` },
      });
      assert.equal(r.status, 400, `${path}: ${r.text}`);
      assert.equal(r.body.error.details.fields[0].field, 'body', path);
    }
  });

  test('creates one vault per account at a custody address of its own, audited as vault.created in the same transaction', async () => {
    const h = await getHarness();
    const { cred, accountId, vault } = await newVault();
    ZVault.parse(vault);
    assert.match(vault.id, /^vault_/);
    assert.equal(vault.accountId, accountId);
    assert.equal(vault.status, 'active');
    assert.equal(vault.policy, null);
    assert.deepEqual(vault.balances, [
      { symbol: 'USDC', chainId: 31337, tokenAddress: USDC, decimals: 6, balanceAtomic: '0', reservedAtomic: '0', availableAtomic: '0' },
    ]);
    const row = await h.db.prisma.vault.findUniqueOrThrow({ where: { id: vault.id } });
    assert.equal(row.address, vault.address);
    assert.equal(h.chain.custody.deriveAddress({ purpose: 'vault', index: row.custodyIndex }).toLowerCase(), vault.address);
    // Its own derivation branch: not the escrow or deposit address of the same index.
    assert.notEqual(h.chain.custody.deriveAddress({ purpose: 'escrow', index: row.custodyIndex }).toLowerCase(), vault.address);
    assert.notEqual(h.chain.custody.deriveAddress({ purpose: 'deposit', index: row.custodyIndex }).toLowerCase(), vault.address);
    const registered = await h.db.prisma.custodyAddress.findUniqueOrThrow({ where: { address: vault.address } });
    assert.equal(registered.purpose, 'vault');
    const audit = await h.db.prisma.vaultAuditEvent.findMany({ where: { vaultId: vault.id } });
    assert.deepEqual(
      audit.map((a) => [a.eventType, a.actorType, a.actorId, a.policyId]),
      [['vault.created', 'partner_app', cred.appId, null]],
    );
    // Audit row and vault row were written by one transaction: PostgreSQL stamps both with its id (xmin).
    assert.equal(await writerOf('vaults', vault.id), await writerOf('vault_audit_events', audit[0]!.id));

    const again = await call(`/v2/accounts/${accountId}/vault`, { credential: cred, body: {} });
    assert.equal(again.status, 200);
    assert.equal(again.body.vault.id, vault.id);
    assert.equal(await h.db.prisma.vault.count({ where: { accountId } }), 1);
    const read = await call(`/v2/accounts/${accountId}/vault`, { credential: cred });
    assert.equal(read.status, 200);
    assert.deepEqual(read.body.vault, vault);
  });

  test('a replay with the same Idempotency-Key answers the original; the key with another body is 409 idempotency_conflict', async () => {
    const cred = await newApp();
    const accountId = await newAccount(cred);
    const first = await call(`/v2/accounts/${accountId}/vault`, { credential: cred, body: {}, headers: { 'Idempotency-Key': 'vault-1' } });
    assert.equal(first.status, 201);
    const replay = await call(`/v2/accounts/${accountId}/vault`, { credential: cred, body: {}, headers: { 'Idempotency-Key': 'vault-1' } });
    assert.equal(replay.status, 201);
    assert.deepEqual(replay.body, first.body);
    const conflict = await call(`/v2/accounts/${accountId}/vault`, {
      credential: cred,
      body: { chainId: 31337 },
      headers: { 'Idempotency-Key': 'vault-1' },
    });
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.error.code, 'idempotency_conflict');
  });

  test('refuses a chain the environment has no vaults on with 424 and unknown body fields with 400', async () => {
    const cred = await newApp();
    const accountId = await newAccount(cred);
    const chain = await call(`/v2/accounts/${accountId}/vault`, { credential: cred, body: { chainId: 1 } });
    assert.equal(chain.status, 424);
    const extra = await call(`/v2/accounts/${accountId}/vault`, { credential: cred, body: { owner: 'me' } });
    assert.equal(extra.status, 400);
  });

  test('two concurrent creates for one account make one vault', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const accountId = await newAccount(cred);
    const results = await Promise.all([1, 2, 3].map(() => call(`/v2/accounts/${accountId}/vault`, { credential: cred, body: {} })));
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 200, 201]);
    assert.equal(new Set(results.map((r) => r.body.vault.id)).size, 1);
    assert.equal(await h.db.prisma.vault.count({ where: { accountId } }), 1);
  });
});

describe('Vaults: policy', () => {
  test('a new policy defaults its spend limit from config and waits for approval (vault.policy.created)', async () => {
    const h = await getHarness();
    const { cred, accountId, vault } = await newVault();
    const res = await call(`/v2/accounts/${accountId}/vault/policy`, {
      method: 'PUT',
      credential: cred,
      body: policyBody('Ada@Example.com'),
    });
    assert.equal(res.status, 200, res.text);
    ZVault.parse(res.body.vault);
    assert.equal(res.body.vault.policy, null);
    const pending = res.body.vault.pendingPolicy;
    assert.match(pending.id, /^vault_policy_/);
    assert.equal(pending.status, 'pending_approval');
    assert.deepEqual(pending.spendLimit, { amountAtomic: '1000000000', currency: 'USD', decimals: 6, period: 'fixed_30_day' });
    assert.deepEqual(pending.allowedTokens, [{ symbol: 'USDC', chainId: 31337, tokenAddress: USDC, decimals: 6 }]);
    const audit = await h.db.prisma.vaultAuditEvent.findMany({ where: { vaultId: vault.id, eventType: 'vault.policy.created' } });
    assert.equal(audit.length, 1);
    assert.equal(audit[0]!.policyId, pending.id);
    assert.equal((audit[0]!.payload as Record<string, unknown>).approvalEmail, 'A***@Example.com');
  });

  test('refuses a spend limit over maxAmountAtomic, a token that is not configured, another period or method, with 400 and nothing written', async () => {
    const h = await getHarness();
    const { cred, accountId, vault } = await newVault();
    const put = (body: unknown) => call(`/v2/accounts/${accountId}/vault/policy`, { method: 'PUT', credential: cred, body });
    const atMax = await put(policyBody('a@example.com', '10000000000'));
    assert.equal(atMax.status, 200);
    const over = await put(policyBody('a@example.com', '10000000001'));
    assert.equal(over.status, 400);
    assert.equal(over.body.error.details.fields[0].field, 'body.spendLimit.amountAtomic');
    for (const bad of [
      { ...policyBody('a@example.com'), allowedTokens: [{ chainId: 31337, tokenAddress: '0x0000000000000000000000000000000000000001' }] },
      { ...policyBody('a@example.com'), allowedTokens: [] },
      { ...policyBody('a@example.com'), period: 'monthly' },
      { ...policyBody('a@example.com'), managedApproval: { method: 'sms_otp', email: 'a@example.com' } },
      { ...policyBody('not-an-email') },
      { ...policyBody('a@example.com'), spendLimit: { amountAtomic: '0' } },
      { ...policyBody('a@example.com'), spendLimit: { amountAtomic: '1.5' } },
    ]) {
      const res = await put(bad);
      assert.equal(res.status, 400, JSON.stringify(bad));
      assert.equal(res.body.error.code, 'bad_request');
    }
    assert.equal(await h.db.prisma.vaultPolicy.count({ where: { vaultId: vault.id } }), 1);
  });
});

describe('Vaults: email OTP approval', () => {
  test('the code mailed over SMTP activates the policy, emits vault.policy_active and audits each step in order', async () => {
    const h = await getHarness();
    const { cred, accountId, vault } = await newVault();
    const email = uniqueEmail();
    const before = h.mailbox.received.length;
    const put = await call(`/v2/accounts/${accountId}/vault/policy`, {
      method: 'PUT',
      credential: cred,
      body: policyBody(email, '5000000'),
    });
    const policyId = put.body.vault.pendingPolicy.id;
    const sent = await call(`/v2/accounts/${accountId}/vault/policy/approval`, { credential: cred, body: {} });
    assert.equal(sent.status, 201, sent.text);
    assert.equal(sent.body.approval.policyId, policyId);
    assert.equal(sent.body.approval.sentTo, `p***@example.com`);
    assert.equal(sent.body.approval.attemptsAllowed, 5);
    const expiresIn = Date.parse(sent.body.approval.expiresAt) - Date.now();
    assert.ok(expiresIn > 9 * 60_000 && expiresIn <= 10 * 60_000, String(expiresIn));
    const mail = await h.mailbox.next(email, before);
    const code = h.mailbox.codeOf(mail);
    assert.match(code, /^\d{6}$/);
    // Only an HMAC is stored, never the code.
    const stored = await h.db.prisma.vaultApprovalCode.findFirstOrThrow({ where: { policyId } });
    assert.notEqual(stored.codeHash, code);
    assert.ok(!stored.codeHash.includes(code));
    assert.equal(await h.db.prisma.sandboxMail.count({ where: { accountId } }), 0, 'SMTP configured: no outbox copy');

    const wrong = code === '000000' ? '000001' : '000000';
    const bad = await call(`/v2/accounts/${accountId}/vault/policy/approval/verify`, { credential: cred, body: { code: wrong } });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.error.code, 'approval_code_invalid');
    assert.equal(bad.body.error.details.attemptsRemaining, 4);

    const ok = await call(`/v2/accounts/${accountId}/vault/policy/approval/verify`, { credential: cred, body: { code } });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.vault.policy.id, policyId);
    assert.equal(ok.body.vault.policy.status, 'active');
    assert.equal(ok.body.vault.pendingPolicy, null);
    assert.equal(ok.body.vault.spendPeriod.remainingAtomic, '5000000');
    const row = await h.db.prisma.vault.findUniqueOrThrow({ where: { id: vault.id } });
    assert.equal(row.activePolicyId, policyId);
    const events = await h.db.prisma.event.findMany({ where: { resourceId: vault.id } });
    assert.deepEqual(
      events.map((e) => [e.name, e.resourceType, e.accountId]),
      [['vault.policy_active', 'vault', accountId]],
    );
    assert.deepEqual(events[0]!.payload, { accountId, vaultId: vault.id, policyId });
    // The policy's activation, its audit row and its webhook event: one transaction.
    const activeAudit = await h.db.prisma.vaultAuditEvent.findFirstOrThrow({
      where: { vaultId: vault.id, eventType: 'vault.policy_active' },
    });
    assert.equal(await writerOf('vault_policies', policyId), await writerOf('vault_audit_events', activeAudit.id));
    assert.equal(await writerOf('events', events[0]!.id), await writerOf('vault_audit_events', activeAudit.id));

    const list = await call(`/v2/accounts/${accountId}/vault/audit-events?limit=100`, { credential: cred });
    assert.equal(list.status, 200);
    ZVaultAuditEventList.parse(list.body);
    assert.deepEqual(list.body.data.map((e: { eventType: string }) => e.eventType).reverse(), [
      'vault.created',
      'vault.policy.created',
      'vault.policy.approval_sent',
      'vault.policy.approval_failed',
      'vault.policy.approval_verified',
      'vault.policy_active',
    ]);
    const active = list.body.data[0];
    assert.equal(active.policyId, policyId);
    assert.deepEqual(active.actor, { type: 'partner_app', id: cred.appId });
    assert.equal(list.body.nextCursor, undefined);
    // The code appears in no audit payload.
    assert.ok(!JSON.stringify(list.body).includes(code));
  });

  test('a code is single use: two concurrent verifications of the right code activate once', async () => {
    const h = await getHarness();
    const { cred, accountId, vault } = await newVault();
    const code = await requestCode(cred, accountId, uniqueEmail());
    const results = await Promise.all(
      [1, 2].map(() => call(`/v2/accounts/${accountId}/vault/policy/approval/verify`, { credential: cred, body: { code } })),
    );
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 409]);
    assert.equal(await h.db.prisma.event.count({ where: { resourceId: vault.id, name: 'vault.policy_active' } }), 1);
  });

  test('a code expires after 10 minutes (409 approval_code_expired)', async () => {
    const h = await getHarness();
    const { cred, accountId, vault } = await newVault();
    const code = await requestCode(cred, accountId, uniqueEmail());
    const policy = await h.db.prisma.vaultPolicy.findFirstOrThrow({ where: { vaultId: vault.id } });
    await h.db.prisma.vaultApprovalCode.updateMany({ where: { policyId: policy.id }, data: { expiresAt: new Date(Date.now() - 1) } });
    const res = await call(`/v2/accounts/${accountId}/vault/policy/approval/verify`, { credential: cred, body: { code } });
    assert.equal(res.status, 409);
    assert.equal(res.body.error.code, 'approval_code_expired');
    assert.equal((await h.db.prisma.vaultPolicy.findUniqueOrThrow({ where: { id: policy.id } })).status, 'pending_approval');
  });

  test('five wrong attempts use a code up: the right code is refused afterwards', async () => {
    const { cred, accountId } = await newVault();
    const code = await requestCode(cred, accountId, uniqueEmail());
    const wrong = code === '999999' ? '999998' : '999999';
    for (let i = 1; i <= 5; i += 1) {
      const res = await call(`/v2/accounts/${accountId}/vault/policy/approval/verify`, { credential: cred, body: { code: wrong } });
      assert.equal(res.status, 422);
      assert.equal(res.body.error.details.attemptsRemaining, 5 - i);
    }
    const late = await call(`/v2/accounts/${accountId}/vault/policy/approval/verify`, { credential: cred, body: { code } });
    assert.equal(late.status, 409);
    assert.equal(late.body.error.code, 'approval_code_expired');
  });

  test('a newer code replaces the older one, and a policy update needs its own approval while the active one stays in force', async () => {
    const h = await getHarness();
    const { cred, accountId, vault, email } = await activeVault('7000000');
    const firstPolicy = vault.policy.id;
    const old = await requestCode(cred, accountId, email, '8000000');
    const fresh = await sendCode(cred, accountId, email);
    const stale = await call(`/v2/accounts/${accountId}/vault/policy/approval/verify`, { credential: cred, body: { code: old } });
    if (old !== fresh) assert.equal(stale.status, 422);
    const during = await call(`/v2/accounts/${accountId}/vault`, { credential: cred });
    assert.equal(during.body.vault.policy.id, firstPolicy);
    assert.equal(during.body.vault.policy.spendLimit.amountAtomic, '7000000');
    const ok = await call(`/v2/accounts/${accountId}/vault/policy/approval/verify`, { credential: cred, body: { code: fresh } });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.vault.policy.spendLimit.amountAtomic, '8000000');
    assert.equal(ok.body.vault.policy.version, 2);
    assert.equal((await h.db.prisma.vaultPolicy.findUniqueOrThrow({ where: { id: firstPolicy } })).status, 'superseded');
    const types = (await h.db.prisma.vaultAuditEvent.findMany({ where: { vaultId: vault.id }, orderBy: [{ createdAt: 'asc' }] })).map(
      (e) => e.eventType,
    );
    assert.ok(types.includes('vault.policy.updated'));
  });

  test('without a pending policy the approval calls answer 409; a failing mail relay answers 503 and records only an approval_failed audit row', async () => {
    const h = await getHarness();
    const { cred, accountId, vault } = await newVault();
    const send = await call(`/v2/accounts/${accountId}/vault/policy/approval`, { credential: cred, body: {} });
    assert.equal(send.status, 409);
    const verify = await call(`/v2/accounts/${accountId}/vault/policy/approval/verify`, { credential: cred, body: { code: '123456' } });
    assert.equal(verify.status, 409);
    const badCode = await call(`/v2/accounts/${accountId}/vault/policy/approval/verify`, { credential: cred, body: { code: '12345' } });
    assert.equal(badCode.status, 400);

    await call(`/v2/accounts/${accountId}/vault/policy`, { method: 'PUT', credential: cred, body: policyBody(uniqueEmail()) });
    h.mailbox.failing = true;
    try {
      const failed = await call(`/v2/accounts/${accountId}/vault/policy/approval`, { credential: cred, body: {} });
      assert.equal(failed.status, 503, failed.text);
      assert.equal(failed.body.error.code, 'provider_unavailable');
    } finally {
      h.mailbox.failing = false;
    }
    assert.equal(await h.db.prisma.vaultApprovalCode.count({ where: { policy: { vaultId: vault.id } } }), 0);
    const last = await h.db.prisma.vaultAuditEvent.findFirstOrThrow({ where: { vaultId: vault.id }, orderBy: [{ createdAt: 'desc' }] });
    assert.equal(last.eventType, 'vault.policy.approval_failed');
    assert.equal((last.payload as Record<string, unknown>).reason, 'mail_not_sent');
  });
});

describe('Vaults: audit events list', () => {
  test('pages newest first with limit (default 20, 1-100) and an opaque cursor; the last page has no nextCursor', async () => {
    const { cred, accountId } = await newVault();
    for (let i = 0; i < 22; i += 1) {
      const res = await call(`/v2/accounts/${accountId}/vault/policy`, {
        method: 'PUT',
        credential: cred,
        body: policyBody('a@example.com', String(1000 + i)),
      });
      assert.equal(res.status, 200);
    }
    const path = `/v2/accounts/${accountId}/vault/audit-events`;
    const first = await call(path, { credential: cred });
    assert.equal(first.status, 200);
    assert.deepEqual(Object.keys(first.body).sort(), ['data', 'nextCursor']);
    assert.equal(first.body.data.length, 20);
    assert.equal(first.body.data[0].payload.spendLimitAtomic, '1021');
    const second = await call(`${path}?cursor=${encodeURIComponent(first.body.nextCursor)}`, { credential: cred });
    assert.equal(second.status, 200);
    assert.equal(second.body.data.length, 3);
    assert.deepEqual(Object.keys(second.body), ['data']);
    assert.equal(second.body.data[2].eventType, 'vault.created');
    const ids = new Set([...first.body.data, ...second.body.data].map((e: { id: string }) => e.id));
    assert.equal(ids.size, 23);
    const small = await call(`${path}?limit=1`, { credential: cred });
    assert.equal(small.body.data.length, 1);
    const max = await call(`${path}?limit=100`, { credential: cred });
    assert.equal(max.body.data.length, 23);
    for (const q of ['limit=0', 'limit=101', 'limit=abc', 'cursor=forged', 'extra=1']) {
      const res = await call(`${path}?${q}`, { credential: cred });
      assert.equal(res.status, 400, q);
      assert.equal(res.body.error.code, 'bad_request');
    }
    // A cursor of another vault's list is refused, not followed.
    const other = await newVault(cred);
    for (let i = 0; i < 2; i += 1)
      await call(`/v2/accounts/${other.accountId}/vault/policy`, { method: 'PUT', credential: cred, body: policyBody('b@example.com') });
    const page = await call(`/v2/accounts/${other.accountId}/vault/audit-events?limit=1`, { credential: cred });
    const foreign = await call(`${path}?cursor=${encodeURIComponent(page.body.nextCursor)}`, { credential: cred });
    assert.equal(foreign.status, 400);
  });
});
