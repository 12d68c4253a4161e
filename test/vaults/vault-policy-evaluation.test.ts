import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { call, newApp } from '../support/api-client';
import { getHarness } from '../support/harness';
import { newPayer, payTo } from '../support/chain';
import { createPayment, newAccount, newMerchant, newVault, type Merchant } from '../support/fixtures';
import { authorizeVaultFunding } from '../../src/domain/vaults/vault-funding';
import { decideFunding, fundingRules, type FundingFacts, type FundingRefusal } from '../../src/domain/vaults/pure/vault-policy-rules';
import { ApiError } from '../../src/domain/requests/errors';
import type { AppCredential } from '../../src/domain/apps/apps';
import { activeVault, policyBody, uniqueEmail } from './support';

const USDC = (n: number) => BigInt(n) * 1_000_000n;

/** A vault with an active policy (limit), holding `funded` USDC, and a merchant (recipient) of the same app. */
async function fundedVault(limitAtomic: bigint, funded: bigint) {
  const v = await activeVault(limitAtomic.toString());
  if (funded > 0n) await payTo(await newPayer(funded), v.vault.address, funded);
  const merchant = await newMerchant(v.cred);
  return { ...v, merchant };
}

function evaluate(cred: AppCredential, vaultId: string, body: unknown) {
  return call(`/v2/vaults/${vaultId}/policy/evaluate`, { credential: cred, body });
}

const spend = (m: Merchant, amount: string, extra: Record<string, unknown> = {}) => ({
  amount,
  assetCode: 'USDC',
  chainId: 31337,
  destination: { type: 'upa', accountId: m.accountId },
  ...extra,
});

type Rules = Array<{ rule: string; verdict: string; reasonCode: string | null; detail: string }>;
const verdictsOf = (rules: Rules) => Object.fromEntries(rules.map((r) => [r.rule, r.verdict]));

/** Everything a spend from the vault writes or moves: none of it may change under a dry run. */
async function vaultState(cred: AppCredential, accountId: string, vaultId: string) {
  const p = (await getHarness()).db.prisma;
  const vault = await call(`/v2/accounts/${accountId}/vault`, { credential: cred });
  assert.equal(vault.status, 200, vault.text);
  return {
    vault: { ...vault.body.vault, updatedAt: undefined },
    fundingOperations: await p.vaultFundingOperation.findMany({ where: { vaultId }, orderBy: { id: 'asc' } }),
    fundReturns: await p.fundReturn.count({ where: { vaultId } }),
    auditEvents: await p.vaultAuditEvent.count({ where: { vaultId } }),
    approvalCodes: await p.vaultApprovalCode.count({ where: { policy: { vaultId } } }),
    partnerEvents: await p.event.count({ where: { appId: cred.appId } }),
    ledgerEntries: await p.ledgerEntry.count({ where: { book: `custody:vault:${vaultId}` } }),
    idempotencyRecords: await p.idempotencyRecord.count({ where: { appId: cred.appId } }),
    vaultRow: await p.vault.findUniqueOrThrow({ where: { id: vaultId } }),
  };
}

const reasonOf = (err: unknown) => (err instanceof ApiError ? (err.details as { reasonCode: string }).reasonCode : String(err));

describe('Vault policy dry run: decisions', () => {
  test('an allowed spend: every rule passes, the limit left in the period is shown, no approval is asked', async () => {
    const { cred, vault, merchant } = await fundedVault(USDC(100), USDC(50));
    const res = await evaluate(cred, vault.id, spend(merchant, '10.5'));
    assert.equal(res.status, 200, res.text);
    const e = res.body.evaluation;
    assert.equal(e.decision, 'allow');
    assert.equal(e.reasonCode, null);
    assert.equal(e.vaultId, vault.id);
    assert.equal(e.policyId, vault.policy.id);
    assert.equal(e.spend.amountAtomic, '10500000');
    assert.equal(e.spend.paymentId, null);
    assert.deepEqual(verdictsOf(e.rules), {
      payment: 'not_applicable',
      destination: 'pass',
      policy_active: 'pass',
      allowed_tokens: 'pass',
      spend_limit: 'pass',
      available_balance: 'pass',
      managed_approval: 'not_applicable',
    });
    assert.equal(e.approvalRequired, false);
    assert.equal(e.spendLimit.amountAtomic, '100000000');
    assert.equal(e.spendLimit.authorizedAtomic, '0');
    assert.equal(e.spendLimit.remainingAtomic, '100000000');
    assert.equal(e.spendLimit.startsAt, vault.spendPeriod.startsAt);
    assert.equal(e.spendLimit.endsAt, vault.spendPeriod.endsAt);
  });

  test('an over-limit spend is denied naming the spend_limit rule, and the vault, its reservations, period, events and ledger are unchanged', async () => {
    const { cred, accountId, vault, merchant } = await fundedVault(USDC(100), USDC(500));
    const before = await vaultState(cred, accountId, vault.id);
    const res = await evaluate(cred, vault.id, spend(merchant, '100.000001'));
    assert.equal(res.status, 200, res.text);
    const e = res.body.evaluation;
    assert.equal(e.decision, 'deny');
    assert.equal(e.reasonCode, 'vault_spend_limit_exceeded');
    const failed = (e.rules as Rules).filter((r) => r.verdict === 'fail');
    assert.deepEqual(
      failed.map((r) => [r.rule, r.reasonCode]),
      [['spend_limit', 'vault_spend_limit_exceeded']],
    );
    assert.match(failed[0]!.detail, /exceeds the limit of 100000000/);
    // The balance would cover it: only the limit refuses.
    assert.equal(verdictsOf(e.rules).available_balance, 'pass');
    assert.deepEqual(await vaultState(cred, accountId, vault.id), before);
  });

  test('with a Payment: the dry run decides as the authorization does (denied over the limit, then over the balance) and writes nothing', async () => {
    const { cred, accountId, vault, merchant } = await fundedVault(USDC(20), USDC(8));
    const over = (await createPayment(merchant, { amount: '25' })).body.payment.id as string;
    const poor = (await createPayment(merchant, { amount: '9' })).body.payment.id as string;
    const fits = (await createPayment(merchant, { amount: '8' })).body.payment.id as string;
    const h = await getHarness();
    const d = { prisma: h.db.prisma, chains: h.chain.chains };
    const before = await vaultState(cred, accountId, vault.id);
    for (const [paymentId, amount, reason] of [
      [over, '25', 'vault_spend_limit_exceeded'],
      [poor, '9', 'vault_insufficient_balance'],
    ] as const) {
      const res = await evaluate(cred, vault.id, spend(merchant, amount, { paymentId }));
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.evaluation.decision, 'deny');
      assert.equal(res.body.evaluation.reasonCode, reason);
      assert.equal(res.body.evaluation.spend.paymentId, paymentId);
      assert.equal(verdictsOf(res.body.evaluation.rules).payment, 'pass');
      await assert.rejects(
        authorizeVaultFunding(d, { paymentId, payerAccountId: accountId, actor: { type: 'client', id: accountId } }),
        (err) => reasonOf(err) === reason,
      );
    }
    const ok = await evaluate(cred, vault.id, spend(merchant, '8', { paymentId: fits }));
    assert.equal(ok.body.evaluation.decision, 'allow', ok.text);
    assert.deepEqual(await vaultState(cred, accountId, vault.id), before);
  });

  test('a cancelled Payment fails the payment rule (payment_not_fundable), as authorize refuses it', async () => {
    const { cred, vault, merchant } = await fundedVault(USDC(100), USDC(50));
    const paymentId = (await createPayment(merchant, { amount: '5' })).body.payment.id as string;
    const cancel = await call(`/v2/payments/${paymentId}/cancel`, { credential: cred, body: { reasonCode: 'abandoned' } });
    assert.equal(cancel.status, 200, cancel.text);
    assert.equal(cancel.body.payment.status, 'cancelled');
    const res = await evaluate(cred, vault.id, spend(merchant, '5', { paymentId }));
    assert.equal(res.body.evaluation.decision, 'deny', res.text);
    assert.equal(res.body.evaluation.reasonCode, 'payment_not_fundable');
    assert.equal(verdictsOf(res.body.evaluation.rules).payment, 'fail');
  });

  test('a destination the vault may not pay (its own account) is denied by the destination rule; the policy has no allowlist of recipients', async () => {
    const { cred, accountId, vault } = await fundedVault(USDC(100), USDC(50));
    const res = await evaluate(cred, vault.id, spend({ cred, accountId, wallet: '' }, '1'));
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.evaluation.decision, 'deny');
    assert.equal(res.body.evaluation.reasonCode, 'payment_not_fundable');
    assert.equal(verdictsOf(res.body.evaluation.rules).destination, 'fail');
  });

  test('a policy waiting for its email approval: denied (no active policy), approvalRequired false, and no code is sent or stored', async () => {
    const h = await getHarness();
    const v = await newVault();
    const merchant = await newMerchant(v.cred);
    const put = await call(`/v2/accounts/${v.accountId}/vault/policy`, {
      method: 'PUT',
      credential: v.cred,
      body: policyBody(uniqueEmail()),
    });
    assert.equal(put.status, 200, put.text);
    const mails = h.mailbox.received.length;
    const before = await vaultState(v.cred, v.accountId, v.vault.id);
    const res = await evaluate(v.cred, v.vault.id, spend(merchant, '1'));
    assert.equal(res.status, 200, res.text);
    const e = res.body.evaluation;
    assert.equal(e.decision, 'deny');
    assert.equal(e.reasonCode, 'vault_policy_inactive');
    assert.equal(e.approvalRequired, false);
    assert.equal(e.policyId, null);
    assert.equal(e.spendLimit, null);
    assert.equal(verdictsOf(e.rules).spend_limit, 'not_applicable');
    assert.deepEqual(await vaultState(v.cred, v.accountId, v.vault.id), before);
    assert.equal(h.mailbox.received.length, mails);
  });
});

describe('Vault policy dry run: refusals', () => {
  test("404 for another app's vault, an unknown vault, another app's Payment or destination account; nothing is written", async () => {
    const { cred, accountId, vault, merchant } = await fundedVault(USDC(100), USDC(5));
    const other = await newMerchant();
    const otherPayment = (await createPayment(other, { amount: '1' })).body.payment.id as string;
    const before = await vaultState(cred, accountId, vault.id);
    const cases: Array<[string, AppCredential, string, unknown]> = [
      ["another app's vault", other.cred, vault.id, spend(other, '1')],
      ['an unknown vault', cred, 'vault_doesnotexist1', spend(merchant, '1')],
      ["another app's Payment", cred, vault.id, spend(merchant, '1', { paymentId: otherPayment })],
      ["another app's account as destination", cred, vault.id, spend(other, '1')],
    ];
    for (const [what, credential, vaultId, body] of cases) {
      const res = await evaluate(credential, vaultId, body);
      assert.equal(res.status, 404, `${what}: ${res.text}`);
      assert.equal(res.body.error.code, 'not_found', what);
    }
    assert.deepEqual(await vaultState(cred, accountId, vault.id), before);
  });

  test('400 for a bad amount, NUL in a string, an unknown field, a malformed vault id, or a spend that is not the Payment it names', async () => {
    const { cred, accountId, vault, merchant } = await fundedVault(USDC(100), USDC(5));
    const paymentId = (await createPayment(merchant, { amount: '5' })).body.payment.id as string;
    const before = await vaultState(cred, accountId, vault.id);
    const bodies: Array<[string, unknown, string]> = [
      ['zero', spend(merchant, '0.00'), 'body.amount'],
      ['negative', spend(merchant, '-1'), 'body.amount'],
      ['a number', { ...spend(merchant, '1'), amount: 1 }, 'body.amount'],
      ['two points', spend(merchant, '1.2.3'), 'body.amount'],
      ['more decimals than USDC has', spend(merchant, '1.0000001'), 'body.amount'],
      ['NUL in the asset', { ...spend(merchant, '1'), assetCode: 'US\u0000DC' }, 'body.assetCode'],
      ['NUL in the account id', spend({ ...merchant, accountId: `${merchant.accountId}\u0000` }, '1'), 'body.destination.accountId'],
      ['an unknown field', { ...spend(merchant, '1'), memo: 'x' }, 'body'],
      ['not the Payment amount', spend(merchant, '6', { paymentId }), 'body.amount'],
    ];
    for (const [what, body, field] of bodies) {
      const res = await evaluate(cred, vault.id, body);
      assert.equal(res.status, 400, `${what}: ${res.text}`);
      assert.equal(res.body.error.code, 'bad_request', what);
      assert.ok(res.text.includes(field), `${what} names ${field}: ${res.text}`);
    }
    const badId = await evaluate(cred, 'vault_policy_x', spend(merchant, '1'));
    assert.equal(badId.status, 400, badId.text);
    assert.deepEqual(await vaultState(cred, accountId, vault.id), before);
  });

  test('403 without v2:vaults, 424 where vaults are off (production) or on a chain vaults do not run on, 422 for an asset the chain lacks', async () => {
    const { cred, vault, merchant } = await fundedVault(USDC(100), USDC(0));
    const noScope = await newApp({ scopes: ['v2:accounts', 'v2:payments'] });
    const forbidden = await evaluate(noScope, vault.id, spend(merchant, '1'));
    assert.equal(forbidden.status, 403, forbidden.text);
    const prod = await newApp({ environment: 'production' });
    const prodAccount = await newAccount(prod);
    const off = await evaluate(prod, 'vault_anything1', spend({ cred: prod, accountId: prodAccount, wallet: '' }, '1'));
    assert.equal(off.status, 424, off.text);
    assert.equal(off.body.error.code, 'chain_config_missing');
    const chain = await evaluate(cred, vault.id, spend(merchant, '1', { chainId: 79685 }));
    assert.equal(chain.status, 424, chain.text);
    const asset = await evaluate(cred, vault.id, spend(merchant, '1', { assetCode: 'EURC' }));
    assert.equal(asset.status, 422, asset.text);
    assert.equal(asset.body.error.code, 'payment_method_not_supported');
  });
});

/** The decision as authorization made it before every rule gave a verdict: one check after another. */
function shortCircuit(f: Required<FundingFacts>): FundingRefusal | null {
  if (f.amountAtomic <= 0n || f.paymentOpen === false || !f.destinationAllowed) return 'payment_not_fundable';
  if (!f.policyActive) return 'vault_policy_inactive';
  if (!f.tokenAllowed) return 'vault_token_not_allowed';
  if (f.spentInPeriodAtomic + f.amountAtomic > f.limitAtomic) return 'vault_spend_limit_exceeded';
  if (f.availableAtomic < f.amountAtomic) return 'vault_insufficient_balance';
  return null;
}

describe('Vault policy dry run: one algorithm', () => {
  const facts = fc.record({
    paymentOpen: fc.constantFrom(true, false, null),
    destinationAllowed: fc.boolean(),
    policyActive: fc.boolean(),
    tokenAllowed: fc.boolean(),
    limitAtomic: fc.bigInt({ min: 0n, max: 10n ** 12n }),
    spentInPeriodAtomic: fc.bigInt({ min: 0n, max: 10n ** 12n }),
    availableAtomic: fc.bigInt({ min: 0n, max: 10n ** 12n }),
    amountAtomic: fc.bigInt({ min: -1n, max: 10n ** 12n }),
  });

  test("property: the dry run's decision (the first failed rule) is the authorization's, over generated policies and spends", () => {
    fc.assert(
      fc.property(facts, (f) => {
        const rules = fundingRules(f);
        const failed = rules.find((r) => r.verdict === 'fail');
        const dryRun = failed ? failed.reasonCode : null;
        const authorized = decideFunding(f);
        assert.equal(authorized.ok ? null : authorized.reason, dryRun);
        assert.equal(dryRun, shortCircuit(f));
      }),
      { numRuns: 2000 },
    );
  });

  test('property: every rule gives its own verdict whatever the others say, and only a failed rule carries a reasonCode', () => {
    fc.assert(
      fc.property(facts, (f) => {
        const v = Object.fromEntries(fundingRules(f).map((r) => [r.rule, r]));
        const limitOk = f.spentInPeriodAtomic + f.amountAtomic <= f.limitAtomic;
        assert.equal(v.spend_limit!.verdict, f.policyActive ? (limitOk ? 'pass' : 'fail') : 'not_applicable');
        assert.equal(v.destination!.verdict, f.destinationAllowed ? 'pass' : 'fail');
        assert.equal(v.managed_approval!.verdict, 'not_applicable');
        for (const r of Object.values(v)) assert.equal(r.reasonCode !== null, r.verdict === 'fail', r.rule);
      }),
      { numRuns: 1000 },
    );
  });
});
