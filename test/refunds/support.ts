import assert from 'node:assert/strict';
import { followVaultReceipts } from '../../src/domain/vaults/vault-receipts';
import { call } from '../support/api-client';
import { eventually, newPayer, payTo } from '../support/chain';
import { getHarness } from '../support/harness';
import { createPayment, waitForPayment, type Merchant } from '../support/fixtures';
import { requestCode, uniqueEmail } from '../vaults/support';

export const USDC = (n: number) => BigInt(n) * 1_000_000n;
let keys = 0;
export const key = (what: string) => `${what}-${process.pid}-${Date.now()}-${(keys += 1)}`;

/**
 * A POST with a fresh Idempotency-Key, as a client sends it. A burst of them queues on one row lock
 * (the Payment's or the incident's), each transaction holding a pool connection while it waits, so on
 * a loaded machine the back of the burst can wait past the pool's acquire timeout: the service then
 * answers its capacity refusal, 503 service_unavailable with Retry-After (see the test below), and a
 * client retries with the same key after that interval. Only that is retried, and only until a
 * deadline: any other 5xx, a 503 without Retry-After, or refusals past the deadline fail the test with
 * every answer it retried.
 */
export async function post(m: Merchant, path: string, body: unknown, opts: { baseUrl?: string; key?: string; deadlineMs?: number } = {}) {
  const headers = { 'idempotency-key': opts.key ?? key('return') };
  const deadline = Date.now() + (opts.deadlineMs ?? 60_000);
  const retried: string[] = [];
  for (;;) {
    const res = await call(path, { credential: m.cred, headers, body, ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}) });
    if (res.status < 500) return res;
    const retryAfter = res.headers.get('retry-after');
    assert.equal(res.status, 503, `POST ${path}: ${res.status} ${res.text}`);
    assert.match(retryAfter ?? '', /^\d+$/, `POST ${path}: a 503 without Retry-After: ${res.text}`);
    assert.equal(res.body.error.code, 'service_unavailable', `POST ${path}: only the capacity refusal is retried: ${res.text}`);
    retried.push(`503 Retry-After ${retryAfter}`);
    const waitMs = Number(retryAfter) * 1000;
    assert.ok(
      Date.now() + waitMs < deadline,
      `POST ${path} still refused after ${retried.length} tries: ${retried.join(', ')}; last ${res.text}`,
    );
    await new Promise((r) => setTimeout(r, waitMs)); // what Retry-After asks of a client
  }
}

/**
 * A Payment of `amount` paid in full by a fresh payer, with `extra` more in the same transfer: an excess
 * incident of `extra`, always. Not a second transfer: whether one is seen while the first confirms
 * (excess) or after the Payment was accepted (a duplicate) depends on timing.
 */
export async function paidPayment(m: Merchant, amount: number, extra = 0) {
  const p = (await createPayment(m, { amount: String(amount) })).body.payment;
  const escrow = p.funding.depositAddress.address as string;
  const payer = await newPayer(USDC(amount + extra));
  await payTo(payer, escrow, USDC(amount + extra));
  const done = await waitForPayment(
    m,
    p.id,
    'succeeded',
    (x) => x.status === 'succeeded' && x.incidentRecoverySummary.count === (extra > 0 ? 1 : 0),
  );
  return { payment: done, payer, escrow };
}

export async function waitForReturn(m: Merchant, paymentId: string, list: 'refunds' | 'incident-recoveries', id: string, status: string) {
  return eventually(async (saw) => {
    const res = await call(`/v2/payments/${paymentId}/${list}`, { credential: m.cred });
    assert.equal(res.status, 200, res.text);
    const item = res.body.items.find((r: { id: string }) => r.id === id);
    saw(item ? { id, status: item.status } : `${id} not listed`);
    return item?.status === status ? item : undefined;
  }, `${id} ${status}`);
}

/** The merchant's vault, its policy active (spend limit `limitAtomic`, USDC allowed), holding `amount` USDC received and posted. */
export async function fundedVault(m: Merchant, amount: number, limitAtomic = USDC(100)) {
  const h = await getHarness();
  const res = await call(`/v2/accounts/${m.accountId}/vault`, { credential: m.cred, body: {} });
  assert.equal(res.status, 201, res.text);
  const vault = res.body.vault;
  const email = uniqueEmail();
  const code = await requestCode(m.cred, m.accountId, email, limitAtomic.toString());
  const ok = await call(`/v2/accounts/${m.accountId}/vault/policy/approval/verify`, { credential: m.cred, body: { code } });
  assert.equal(ok.status, 200, ok.text);
  const funder = await newPayer(USDC(amount));
  await payTo(funder, vault.address, USDC(amount));
  await eventually(async () => {
    await followVaultReceipts({ prisma: h.db.prisma, chains: h.chain.chains });
    return (await h.db.prisma.vaultReceipt.count({ where: { vaultId: vault.id, status: 'posted' } })) === 1;
  }, 'the vault receipt posted');
  return vault as { id: string; address: string };
}
