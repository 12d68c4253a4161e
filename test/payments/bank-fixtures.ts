import assert from 'node:assert/strict';
import { ZPaymentResponse } from '../../src/domain/payments/payment.schemas';
import { call, newApp, uniqueUserId } from '../support/api-client';
import { eventually } from '../support/chain';
import { getHarness, TEST_SERVICE_SECRET } from '../support/harness';
import { sealText } from '../../src/domain/keys/sealed-text';
import { ACCOUNT_NUMBER_LABEL } from '../../src/domain/bank-accounts/bank-accounts';
import { paymentSummary } from '../support/fixtures';

/** An app with a sender account and another account owning a linked US bank account. */
export interface BankParty {
  cred: Awaited<ReturnType<typeof newApp>>;
  senderId: string;
  ownerId: string;
  bankAccountId: string;
  /** The API the party's calls go to (a suite's own, or the harness's). */
  baseUrl?: string;
}

export const BANK_DETAILS = { routingNumber: '021000021', accountType: 'checking' };

let counter = 0;

/**
 * The bank account row is inserted directly (a row of the bank accounts module, until its routes
 * land); `register` gives its providerAccountId (registering it with the provider) when verified.
 */
export async function newBankParty(
  opts: { status?: string; baseUrl?: string; register?: (bankAccountId: string) => Promise<string> } = {},
): Promise<BankParty> {
  const h = await getHarness();
  const status = opts.status ?? 'verified';
  const cred = await newApp();
  const account = async (prefix: string) => {
    const res = await call('/v2/accounts', { credential: cred, body: { externalUserId: uniqueUserId(prefix) } });
    assert.equal(res.status, 201, res.text);
    return res.body.account.id as string;
  };
  const senderId = await account('sender');
  const ownerId = await account('owner');
  counter += 1;
  const bankAccountId = `bank_account_test${process.pid}x${counter}`;
  const providerAccountId = status !== 'verified' ? null : opts.register ? await opts.register(bankAccountId) : `prov_${bankAccountId}`;
  await h.db.prisma.bankAccount.create({
    data: {
      id: bankAccountId,
      appId: cred.appId,
      accountId: ownerId,
      country: 'US',
      currency: 'USD',
      accountHolderName: 'Jane Doe',
      beneficiaryType: 'individual',
      bankName: 'Test Bank',
      bankCode: '021000021',
      details: BANK_DETAILS,
      // Sealed under the harness's key, as the service seals it: a key rotation test re-seals every row.
      accountNumberEncrypted: sealText(TEST_SERVICE_SECRET, ACCOUNT_NUMBER_LABEL, bankAccountId, '000123456789'),
      accountNumberLast4: '6789',
      fingerprint: `fp-${bankAccountId}`,
      rail: 'ach',
      status,
      providerCode: 'sandbox',
      providerAccountId,
    },
  });
  return { cred, senderId, ownerId, bankAccountId, ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}) };
}

let keys = 0;

export function createBankPayment(p: BankParty, overrides: Record<string, unknown> = {}) {
  keys += 1;
  return call('/v2/payments', {
    ...(p.baseUrl ? { baseUrl: p.baseUrl } : {}),
    credential: p.cred,
    headers: { 'idempotency-key': `bank-${process.pid}-${keys}` },
    body: {
      intent: 'send',
      amount: '10',
      assetCode: 'USDC',
      chainId: 31337,
      sourceAccountId: p.senderId,
      destination: { type: 'bank_account', bankAccountId: p.bankAccountId },
      ...overrides,
    },
  });
}

export async function readBankPayment(p: BankParty, id: string) {
  const res = await call(`/v2/payments/${id}`, { ...(p.baseUrl ? { baseUrl: p.baseUrl } : {}), credential: p.cred });
  assert.equal(res.status, 200, res.text);
  return ZPaymentResponse.parse(res.body).payment;
}

export function waitForBankPayment(
  p: BankParty,
  id: string,
  what: string,
  predicate: (x: Awaited<ReturnType<typeof readBankPayment>>) => boolean,
) {
  return eventually(async (saw) => {
    const payment = await readBankPayment(p, id);
    saw(paymentSummary(payment));
    return predicate(payment) ? payment : undefined;
  }, `${id} ${what}`);
}
