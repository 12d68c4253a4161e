import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { AppCredential } from '../../src/domain/apps/apps';
import { checkLedger } from '../../src/domain/ledger/check';
import { call, newApp, uniqueUserId } from '../support/api-client';
import { eventually } from '../support/chain';
import { getHarness } from '../support/harness';

export interface Merchant {
  cred: AppCredential;
  accountId: string;
  wallet: string;
}

/**
 * An app with one account whose settlement destination is a fresh wallet on the sandbox chain, and
 * the display name given (null: no display profile).
 */
export async function newMerchant(cred?: AppCredential, opts: { displayName?: string | null } = {}): Promise<Merchant> {
  const app = cred ?? (await newApp());
  const created = await call('/v2/accounts', { credential: app, body: { externalUserId: uniqueUserId('merchant') } });
  assert.equal(created.status, 201, created.text);
  const accountId = created.body.account.id as string;
  const displayName = opts.displayName === undefined ? 'Corner Shop' : opts.displayName;
  if (displayName !== null) {
    await call(`/v2/accounts/${accountId}/display-profile`, {
      credential: app,
      method: 'PUT',
      body: { displayName, expectedVersion: 0, reason: 'initial set-up for tests' },
    });
  }
  // Registered lowercase; the service keeps and answers it checksummed.
  const wallet = privateKeyToAccount(generatePrivateKey()).address;
  const w = await call(`/v2/accounts/${accountId}/connected-wallets`, { credential: app, body: { chainId: 31337, address: wallet.toLowerCase() } });
  assert.equal(w.status, 201, w.text);
  const sp = await call(`/v2/accounts/${accountId}/settlement-profile`, {
    credential: app,
    method: 'PUT',
    body: { connectedWalletId: w.body.connectedWallets[0].id },
  });
  assert.equal(sp.status, 200, sp.text);
  return { cred: app, accountId, wallet };
}

let keyCounter = 0;

export async function createPayment(m: Merchant, overrides: Record<string, unknown> = {}, key?: string) {
  keyCounter += 1;
  const res = await call('/v2/payments', {
    credential: m.cred,
    headers: { 'idempotency-key': key ?? `pay-${process.pid}-${Date.now()}-${keyCounter}` },
    body: { intent: 'receive', amount: '10', assetCode: 'USDC', chainId: 31337, destination: { type: 'upa', accountId: m.accountId }, ...overrides },
  });
  return res;
}

export async function getPayment(m: Merchant, paymentId: string) {
  const res = await call(`/v2/payments/${paymentId}`, { credential: m.cred });
  assert.equal(res.status, 200, res.text);
  return res.body as { payment: any; nextAction: any };
}

/** What a failed wait reports of the Payment it last read. */
export const paymentSummary = (p: any) => ({ status: p.status, statusVersion: p.statusVersion, stage: p.stage, operationalState: p.operationalState, offrampStatus: p.offrampStatus });

/**
 * Waits until the Payment read through the API satisfies predicate. Its rounds mine blocks (pass
 * `mine: false` to wait on a state that lasts only while nothing is mined, such as confirming).
 */
export async function waitForPayment(m: Merchant, paymentId: string, what: string, predicate: (p: any) => boolean, opts: { mine?: boolean } = {}) {
  return eventually(
    async (saw) => {
      const { payment } = await getPayment(m, paymentId);
      saw(paymentSummary(payment));
      return predicate(payment) ? payment : undefined;
    },
    `${paymentId} ${what}`,
    opts,
  );
}

export async function eventNames(paymentId: string): Promise<string[]> {
  const h = await getHarness();
  const events = await h.db.prisma.event.findMany({ where: { resourceId: paymentId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  return events.map((e) => e.name);
}

export async function assertLedgerBalanced(): Promise<void> {
  const h = await getHarness();
  const result = await checkLedger(h.db.prisma);
  assert.equal(result.ok, true, JSON.stringify(result.problems));
}
