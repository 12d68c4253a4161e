import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createApi } from '../../src/http/app';
import { call, newApp } from '../support/api-client';
import { apiDepsOnHarness, getHarness } from '../support/harness';
import { CliExit, runCli } from '../support/cli';
import { policyBody, uniqueEmail } from './support';
import { newAccount } from '../support/fixtures';

async function cli(args: string[]) {
  return runCli(args).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (err: CliExit) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
  );
}

describe('Vaults: sandbox without SMTP', () => {
  let server: Server;
  let baseUrl: string;
  before(async () => {
    // The API as `npm start` runs it without SMTP_URL: no mailer, the sandbox outbox instead.
    const api = createApi(await apiDepsOnHarness({ mailer: null }));
    server = await new Promise((resolve) => {
      const s = api.listen(0, '127.0.0.1', () => resolve(s));
    });
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('writes the approval mail to the outbox, and `sandbox vault-codes` reads the code that activates the policy', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const accountId = await newAccount(cred);
    const config = await call('/v2/partners/config', { credential: cred, baseUrl });
    assert.deepEqual(config.body.capabilities.vaults.managedApproval, { method: 'email_otp', ready: true, disabledReason: null });
    assert.equal((await call(`/v2/accounts/${accountId}/vault`, { credential: cred, body: {}, baseUrl })).status, 201);
    const email = uniqueEmail();
    const put = await call(`/v2/accounts/${accountId}/vault/policy`, { method: 'PUT', credential: cred, body: policyBody(email), baseUrl });
    assert.equal(put.status, 200);
    const mailsBefore = h.mailbox.received.length;
    const sent = await call(`/v2/accounts/${accountId}/vault/policy/approval`, { credential: cred, body: {}, baseUrl });
    assert.equal(sent.status, 201, sent.text);
    assert.equal(h.mailbox.received.length, mailsBefore, 'nothing went over SMTP');

    const read = await cli(['sandbox', 'vault-codes', '--account', accountId]);
    assert.equal(read.code, 0, read.stderr);
    const out = JSON.parse(read.stdout.trim());
    assert.equal(out.accountId, accountId);
    assert.equal(out.mails.length, 1);
    assert.equal(out.mails[0].to, email);
    assert.match(out.mails[0].code, /^\d{6}$/);
    const ok = await call(`/v2/accounts/${accountId}/vault/policy/approval/verify`, {
      credential: cred,
      body: { code: out.mails[0].code },
      baseUrl,
    });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.vault.policy.status, 'active');
  });

  test('`sandbox vault-codes` refuses a production account (exit 1) and answers usage errors with exit 2', async () => {
    const prod = await newApp({ environment: 'production' });
    const accountId = await newAccount(prod);
    const refused = await cli(['sandbox', 'vault-codes', '--account', accountId]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /only in the sandbox/);
    assert.equal(refused.stdout, '');
    const usage = await cli(['sandbox', 'vault-codes']);
    assert.equal(usage.code, 2);
  });
});
