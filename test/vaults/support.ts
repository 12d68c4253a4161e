import assert from 'node:assert/strict';
import type { AppCredential } from '../../src/domain/apps/apps';
import { call } from '../support/api-client';
import { getHarness } from '../support/harness';
import { newVault } from '../support/fixtures';

export const USDC = '0xf1108D9fDF3d265B59Bf6Ce7Bf240f99c071ffF5';

let emails = 0;
export function uniqueEmail(): string {
  emails += 1;
  return `payer-${process.pid}-${emails}@example.com`;
}

export function policyBody(email: string, amountAtomic?: string) {
  return {
    ...(amountAtomic ? { spendLimit: { amountAtomic } } : {}),
    period: 'fixed_30_day',
    allowedTokens: [{ chainId: 31337, tokenAddress: USDC }],
    managedApproval: { method: 'email_otp', email },
  };
}

/** PUT policy, send the code, read it from the mailbox: answers the code (not yet verified). */
export async function requestCode(cred: AppCredential, accountId: string, email: string, amountAtomic?: string): Promise<string> {
  const h = await getHarness();
  const put = await call(`/v2/accounts/${accountId}/vault/policy`, {
    method: 'PUT',
    credential: cred,
    body: policyBody(email, amountAtomic),
  });
  assert.equal(put.status, 200, put.text);
  return sendCode(cred, accountId, email, h.mailbox.received.length);
}

export async function sendCode(cred: AppCredential, accountId: string, email: string, since?: number): Promise<string> {
  const h = await getHarness();
  const before = since ?? h.mailbox.received.length;
  const sent = await call(`/v2/accounts/${accountId}/vault/policy/approval`, { credential: cred, body: {} });
  assert.equal(sent.status, 201, sent.text);
  return h.mailbox.codeOf(await h.mailbox.next(email, before));
}

/** A vault with an active policy (spend limit amountAtomic, USDC allowed), of a new app or the one given. */
export async function activeVault(amountAtomic = '100000000', cred?: AppCredential) {
  const v = await newVault(cred);
  const email = uniqueEmail();
  const code = await requestCode(v.cred, v.accountId, email, amountAtomic);
  const ok = await call(`/v2/accounts/${v.accountId}/vault/policy/approval/verify`, { credential: v.cred, body: { code } });
  assert.equal(ok.status, 200, ok.text);
  return { ...v, vault: ok.body.vault, email };
}
