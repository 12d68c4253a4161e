import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newApp } from '../support/api-client';
import { getHarness, TEST_SERVICE_SECRET } from '../support/harness';
import { cli } from '../support/cli';
import { redeemSignInCode, requestSignInCode } from '../../src/domain/dashboard/sign-in';

describe('Dashboard users from the CLI, and sign-in codes without SMTP', () => {
  test('invite, list and remove print one JSON object each; a sandbox app without SMTP gets its code from the outbox, a production app none', async () => {
    const h = await getHarness();
    const app = await newApp();
    const email = `cli-${Date.now()}@Partner.Example`;
    const invited = await cli(['dashboard', 'invite', '--app', app.appId, '--email', email, '--role', 'developer', '--actor', 'ops']);
    assert.equal(invited.user.email, email.toLowerCase(), 'emails are kept lowercase');
    assert.equal(invited.user.role, 'developer');
    assert.deepEqual(
      (await cli(['dashboard', 'users', '--app', app.appId])).items.map((u: { email: string }) => u.email),
      [email.toLowerCase()],
    );

    const deps = { prisma: h.db.prisma, serviceSecret: TEST_SERVICE_SECRET, mailer: null };
    assert.equal(await requestSignInCode(deps, email.toLowerCase()), 'sent');
    const { code } = await cli(['dashboard', 'sandbox-code', '--email', email]);
    assert.match(code, /^\d{6}$/);
    const opened = await redeemSignInCode(deps, email.toLowerCase(), code);
    assert.deepEqual(
      opened?.map((m) => m.appId),
      [app.appId],
    );

    const production = await newApp({ environment: 'production' });
    await cli(['dashboard', 'invite', '--app', production.appId, '--email', email, '--role', 'viewer', '--actor', 'ops']);
    assert.equal(await requestSignInCode(deps, email.toLowerCase()), 'no_mail', 'a production membership needs SMTP');

    const removed = await cli(['dashboard', 'remove', '--app', app.appId, '--user', invited.user.id, '--actor', 'ops']);
    assert.equal(removed.user.id, invited.user.id);
    assert.deepEqual((await cli(['dashboard', 'users', '--app', app.appId])).items, []);
  });
});
