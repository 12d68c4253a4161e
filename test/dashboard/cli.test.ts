import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newApp } from '../support/api-client';
import { getHarness, TEST_SERVICE_SECRET } from '../support/harness';
import { cli } from '../support/cli';
import { redeemSignInCode, requestSignInCode, SIGN_IN, signInLockOf } from '../../src/domain/dashboard/sign-in';

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
    assert.equal((await requestSignInCode(deps, email.toLowerCase())).outcome, 'sent');
    const { code } = await cli(['dashboard', 'sandbox-code', '--email', email]);
    assert.match(code, /^\d{6}$/);
    const opened = await redeemSignInCode(deps, email.toLowerCase(), code);
    assert.deepEqual(
      opened?.map((m) => m.appId),
      [app.appId],
    );

    const production = await newApp({ environment: 'production' });
    await cli(['dashboard', 'invite', '--app', production.appId, '--email', email, '--role', 'viewer', '--actor', 'ops']);
    assert.equal((await requestSignInCode(deps, email.toLowerCase())).outcome, 'no_mail', 'a production membership needs SMTP');

    const removed = await cli(['dashboard', 'remove', '--app', app.appId, '--user', invited.user.id, '--actor', 'ops']);
    assert.equal(removed.user.id, invited.user.id);
    assert.deepEqual((await cli(['dashboard', 'users', '--app', app.appId])).items, []);
  });

  test('twenty wrong codes in all lock the email: no code is sent or taken, the right one neither, until an operator unlocks it', async () => {
    const h = await getHarness();
    const app = await newApp();
    const email = `locked-${Date.now()}@partner.example`;
    await cli(['dashboard', 'invite', '--app', app.appId, '--email', email, '--role', 'viewer', '--actor', 'ops']);
    const deps = { prisma: h.db.prisma, serviceSecret: TEST_SERVICE_SECRET, mailer: null };
    const newCode = async (now: Date) => {
      assert.equal((await requestSignInCode(deps, email, now)).outcome, 'sent');
      return (await cli(['dashboard', 'sandbox-code', '--email', email])).code as string;
    };
    const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');
    const start = new Date();
    // Four codes' worth of wrong guesses, one short of the lock: each code allows five.
    let code = '';
    for (let failures = 0; failures < SIGN_IN.failuresBeforeLock - 1; failures += 1) {
      if (failures % SIGN_IN.guessesPerCode === 0) code = await newCode(start);
      assert.equal(await redeemSignInCode(deps, email, wrong(code), start), null);
    }
    assert.deepEqual(await signInLockOf(h.db.prisma, email), { email, failures: SIGN_IN.failuresBeforeLock - 1, lockedAt: null });
    code = await newCode(start);
    assert.equal(await redeemSignInCode(deps, email, wrong(code), start), null, 'the twentieth wrong code');
    const locked = await signInLockOf(h.db.prisma, email);
    assert.equal(locked.failures, SIGN_IN.failuresBeforeLock);
    assert.equal(locked.lockedAt, start.toISOString());
    assert.equal(
      await redeemSignInCode(deps, email, code, start),
      null,
      'the right code, with guesses left on it, is refused while locked',
    );
    const later = new Date(start.getTime() + SIGN_IN.windowSeconds * 1000 + 1000);
    assert.equal((await requestSignInCode(deps, email, later)).outcome, 'locked', 'and no new code is sent, however long after');

    assert.deepEqual(await cli(['dashboard', 'unlock', '--email', email]), { email, failures: 0, lockedAt: null });
    code = await newCode(later);
    assert.equal(await redeemSignInCode(deps, email, wrong(code), later), null);
    assert.equal((await signInLockOf(h.db.prisma, email)).failures, 1);
    assert.deepEqual(
      (await redeemSignInCode(deps, email, code, later))?.map((m) => m.appId),
      [app.appId],
      'unlocked, the right code signs in',
    );
    assert.equal((await signInLockOf(h.db.prisma, email)).failures, 0, 'and a sign-in sets the total back to 0');
  });
});
