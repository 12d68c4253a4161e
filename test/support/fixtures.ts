import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { AppCredential } from '../../src/domain/apps/apps';
import { checkLedger } from '../../src/domain/ledger/check';
import { call, newApp, uniqueUserId } from './api-client';
import { eventually } from './chain';
import { getHarness } from './harness';

/**
 * The one fixtures module: what tests create through the API. One naming convention:
 * - `new<Thing>` creates a fixture, asserts it was created, and returns it;
 * - `create<Thing>` sends the create request and returns the response, for tests of the request itself.
 */

/** A new app's account (a UPA), with a unique externalUserId. */
export async function newAccount(cred: AppCredential, opts: { externalUserId?: string } = {}): Promise<string> {
  const res = await call('/v2/accounts', { credential: cred, body: { externalUserId: opts.externalUserId ?? uniqueUserId('account') } });
  assert.equal(res.status, 201, res.text);
  return res.body.account.id as string;
}

/** An account whose settlement destination is a fresh wallet on the sandbox chain (its address lowercase). */
export async function newAccountWithWallet(cred: AppCredential): Promise<{ accountId: string; destination: string }> {
  const h = await getHarness();
  const accountId = await newAccount(cred);
  const destination = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
  await settleTo(cred, accountId, h.chainId, destination);
  return { accountId, destination };
}

async function settleTo(cred: AppCredential, accountId: string, chainId: number, address: string): Promise<void> {
  const w = await call(`/v2/accounts/${accountId}/connected-wallets`, { credential: cred, body: { chainId, address } });
  assert.equal(w.status, 201, w.text);
  const sp = await call(`/v2/accounts/${accountId}/settlement-profile`, {
    credential: cred,
    method: 'PUT',
    body: { connectedWalletId: w.body.connectedWallets[0].id },
  });
  assert.equal(sp.status, 200, sp.text);
}

/** A reusable deposit address of an account on the sandbox chain (an existing one answers 200). */
export async function newDepositAddress(cred: AppCredential, accountId: string, body: Record<string, unknown> = {}) {
  const h = await getHarness();
  const res = await call(`/v2/accounts/${accountId}/deposit-addresses`, { credential: cred, body: { chainId: h.chainId, ...body } });
  assert.ok(res.status === 201 || res.status === 200, res.text);
  return res.body.depositAddress as { id: string; address: string };
}

/** A new account's vault (an app of its own unless one is given). */
export async function newVault(cred?: AppCredential) {
  const app = cred ?? (await newApp());
  const accountId = await newAccount(app);
  const res = await call(`/v2/accounts/${accountId}/vault`, { credential: app, body: {} });
  assert.equal(res.status, 201, res.text);
  return { cred: app, accountId, vault: res.body.vault };
}

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
  const accountId = await newAccount(app, { externalUserId: uniqueUserId('merchant') });
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
  await settleTo(app, accountId, 31337, wallet.toLowerCase());
  return { cred: app, accountId, wallet };
}

let keyCounter = 0;

export async function createPayment(m: Merchant, overrides: Record<string, unknown> = {}, key?: string) {
  keyCounter += 1;
  const res = await call('/v2/payments', {
    credential: m.cred,
    headers: { 'idempotency-key': key ?? `pay-${process.pid}-${Date.now()}-${keyCounter}` },
    body: {
      intent: 'receive',
      amount: '10',
      assetCode: 'USDC',
      chainId: 31337,
      destination: { type: 'upa', accountId: m.accountId },
      ...overrides,
    },
  });
  return res;
}

/** A new receive Payment (201 asserted): the answer's body, with its id and client secret at hand. */
export async function newPayment(m: Merchant, overrides: Record<string, unknown> = {}) {
  const res = await createPayment(m, overrides);
  assert.equal(res.status, 201, res.text);
  const body = res.body as { payment: any; checkout: { paymentUrl: string; clientSecret: string }; nextAction: any };
  return { ...body, id: body.payment.id as string, secret: body.checkout.clientSecret };
}

export async function getPayment(m: Merchant, paymentId: string) {
  const res = await call(`/v2/payments/${paymentId}`, { credential: m.cred });
  assert.equal(res.status, 200, res.text);
  return res.body as { payment: any; nextAction: any };
}

/** What a failed wait reports of the Payment it last read. */
export const paymentSummary = (p: any) => ({
  status: p.status,
  statusVersion: p.statusVersion,
  stage: p.stage,
  operationalState: p.operationalState,
  offrampStatus: p.offrampStatus,
  // Where its transfers and legs stand, so a wait that gives up says whether the chain or the workflow stalled.
  transfers: p.finality?.transfers.map(onChain),
  settlement: p.finality?.settlement.map((f: any) => `${f.leg} ${onChain(f)}`),
});

const onChain = (f: any) => `${f.transactionHash.slice(0, 10)} block ${f.blockNumber} ${f.confirmations}/${f.confirmationsRequired}`;

/**
 * Waits until the Payment read through the API satisfies predicate. Its rounds mine blocks (pass
 * `mine: false` to wait on a state that lasts only while nothing is mined, such as confirming).
 */
export async function waitForPayment(
  m: Merchant,
  paymentId: string,
  what: string,
  predicate: (p: any) => boolean,
  opts: { mine?: boolean } = {},
) {
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
