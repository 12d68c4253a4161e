import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { listenAdminApi } from '../support/bounded-api';
import { apiDepsOnHarness, getHarness } from '../support/harness';
import { createTestOperator, type TestOperator } from '../support/operators';
import { newMerchant, createPayment } from '../support/fixtures';
import { disableOperator } from '../../src/domain/operators/operator-accounts';
import { outboxOperatorCode } from '../../src/domain/operators/operator-sign-in';
import { consoleConfig, wrongTotp } from './support';

/**
 * The admin plane with the console on, on the shared harness's database and service secret. No
 * mailer: the emailed code is kept in its row, where the test reads it (outboxOperatorCode).
 */
async function startConsole() {
  const h = await getHarness();
  return listenAdminApi(
    await apiDepsOnHarness({
      config: consoleConfig(h.config),
      engine: h.engine,
      chains: h.chain.chains,
      mailer: null,
      operator: { engine: h.engine },
    }),
  );
}
type Console = Awaited<ReturnType<typeof startConsole>>;

const cookieOf = (res: Response, name: string) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith(`${name}=`) && c.length > name.length + 1);
const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
const formPost = (c: Console, path: string, cookie: string, fields: Record<string, string>) =>
  fetch(`${c.baseUrl}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams(fields).toString(),
  });

/** The code form, reached as the login form reaches it: its login cookie and CSRF token, and the code emailed (kept in the outbox). */
interface CodeForm {
  loginCookie: string;
  csrf: string;
  code: string;
}

/** Step one over plain HTTP, as the login form does: asks for a code for `email`. */
async function requestCode(c: Console, email: string): Promise<CodeForm> {
  const h = await getHarness();
  const form = await fetch(`${c.baseUrl}/console/login`);
  const formCookie = cookieOf(form, 'pp_console_login');
  assert.ok(formCookie, 'the login form sets its CSRF cookie');
  const res = await formPost(c, '/console/login', formCookie, { email, _csrf: csrfOf(await form.text()) });
  assert.equal(res.status, 200, 'the code form');
  const loginCookie = cookieOf(res, 'pp_console_login');
  assert.ok(loginCookie, 'the code form sets its CSRF cookie');
  const code = await outboxOperatorCode(h.db.prisma, email);
  assert.ok(code, `a code kept for ${email}`);
  return { loginCookie, csrf: csrfOf(await res.text()), code };
}

/** Step two: the emailed code and an authenticator code; answers the response and the session cookie it set, if any. */
async function enterCodes(c: Console, email: string, form: CodeForm, codes: { code?: string; totp: string }) {
  const res = await formPost(c, '/console/login/code', form.loginCookie, {
    email,
    code: codes.code ?? form.code,
    totp: codes.totp,
    _csrf: form.csrf,
  });
  const html = await res.text();
  // A refused pair re-renders the code form with a fresh CSRF token and cookie: the next try uses them.
  const next: CodeForm = { ...form, loginCookie: cookieOf(res, 'pp_console_login') ?? form.loginCookie, csrf: csrfOf(html) || form.csrf };
  return { status: res.status, session: cookieOf(res, 'pp_console'), html, next };
}

/** Signs `op` in over plain HTTP (email, then emailed code and TOTP); answers the session cookie (`pp_console=...`). */
async function signIn(c: Console, op: TestOperator, totp?: string): Promise<string> {
  const form = await requestCode(c, op.email);
  const res = await enterCodes(c, op.email, form, { totp: totp ?? (await op.totp()) });
  assert.equal(res.status, 303, res.html);
  assert.ok(res.session, 'a session cookie');
  return res.session;
}

/** Where the console sends a browser carrying `cookie`: /console when the session holds, /console/login when not. */
async function landing(c: Console, cookie: string): Promise<string> {
  const res = await fetch(`${c.baseUrl}/console`, { redirect: 'manual', headers: { cookie } });
  return res.status === 200 ? '/console' : new URL(res.headers.get('location') ?? '', c.baseUrl).pathname;
}

describe('console sessions end on the server, not only at expiry', () => {
  let first: Console;
  before(async () => {
    first = await startConsole();
  });
  after(async () => {
    await first?.close();
  });

  test('after logout the same cookie, replayed, no longer signs anyone in', async () => {
    const op = await createTestOperator('viewer');
    const session = await signIn(first, op);
    assert.equal(await landing(first, session), '/console');
    const page = await (await fetch(`${first.baseUrl}/console`, { headers: { cookie: session } })).text();
    const out = await formPost(first, '/console/logout', session, { _csrf: csrfOf(page) });
    assert.equal(out.status, 303);
    // A copy of the cookie kept from before the logout (a stolen one, a second tab) is refused too.
    assert.equal(await landing(first, session), '/console/login');
  });

  test("disabling the operator ends their sessions on every process, and they can't sign in again; another operator's session lives on", async () => {
    const h = await getHarness();
    const leaving = await createTestOperator('operator');
    const staying = await createTestOperator('operator');
    const session = await signIn(first, leaving);
    const other = await signIn(first, staying);
    const second = await startConsole();
    try {
      assert.equal(await landing(second, session), '/console', 'another process honours the session: it is held in the database');
      // A code asked for before the operator is disabled, not yet entered.
      const pending = await requestCode(second, leaving.email);
      await disableOperator(h.db.prisma, leaving.email);
      assert.equal(await landing(first, session), '/console/login', 'the disabled operator is signed out');
      assert.equal(await landing(second, session), '/console/login', 'on every process');
      assert.equal(await landing(second, other), '/console', "another operator's session is untouched");

      const late = await enterCodes(second, leaving.email, pending, { totp: await leaving.totp(1) });
      assert.equal(late.status, 401, 'the right codes no longer sign a disabled operator in');
      assert.equal(late.session, undefined);
      // Asking for a code answers as for anyone (no telling which emails are operators'), but none is made.
      const codes = await h.db.prisma.operatorSignInCode.count({ where: { operatorId: leaving.id } });
      const form = await fetch(`${second.baseUrl}/console/login`);
      const asked = await formPost(second, '/console/login', cookieOf(form, 'pp_console_login')!, {
        email: leaving.email,
        _csrf: csrfOf(await form.text()),
      });
      assert.equal(asked.status, 200);
      assert.equal(
        await h.db.prisma.operatorSignInCode.count({ where: { operatorId: leaving.id } }),
        codes,
        'no code for a disabled operator',
      );
    } finally {
      await second.close();
    }
  });

  test('a wrong authenticator code with the right emailed code is refused; so is a wrong emailed code with the right authenticator code', async () => {
    const h = await getHarness();
    const op = await createTestOperator('viewer');
    const form = await requestCode(first, op.email);
    const wrongCode = form.code === '000000' ? '000001' : '000000';

    const badTotp = await enterCodes(first, op.email, form, { totp: await wrongTotp(op) });
    assert.equal(badTotp.status, 401);
    assert.equal(badTotp.session, undefined, 'no session');
    assert.match(badTotp.html, /Those codes are not right/);
    const badCode = await enterCodes(first, op.email, badTotp.next, { code: wrongCode, totp: await op.totp() });
    assert.equal(badCode.status, 401);
    assert.equal(badCode.session, undefined, 'no session');
    assert.equal(await h.db.prisma.consoleSession.count({ where: { operatorId: op.id } }), 0);

    // Neither refusal spent the code or the authenticator's step: the right pair still signs in.
    const right = await enterCodes(first, op.email, badCode.next, { totp: await op.totp() });
    assert.equal(right.status, 303, right.html);
    assert.ok(right.session);
    assert.equal(await landing(first, right.session), '/console');
    // The emailed code works once.
    const replayed = await enterCodes(first, op.email, right.next, { totp: await op.totp(1) });
    assert.equal(replayed.status, 401, 'a spent emailed code is refused');
  });

  test('an authenticator code signs in once: the same code with a fresh emailed code is refused, the next step is accepted', async () => {
    const op = await createTestOperator('viewer');
    const totp = await op.totp();
    const session = await signIn(first, op, totp);
    assert.equal(await landing(first, session), '/console');

    const form = await requestCode(first, op.email);
    const reused = await enterCodes(first, op.email, form, { totp });
    assert.equal(reused.status, 401, 'a TOTP code already taken is refused');
    assert.equal(reused.session, undefined);
    const next = await enterCodes(first, op.email, reused.next, { totp: await op.totp(1) });
    assert.equal(next.status, 303, next.html);
    assert.ok(next.session);
  });

  test('a viewer reads the pages but a resolve form of theirs is refused (403), and acts on nothing', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const p = (await createPayment(m)).body.payment as { id: string };
    const viewer = await createTestOperator('viewer');
    const session = await signIn(first, viewer);
    const page = await fetch(`${first.baseUrl}/console/payments/${p.id}`, { headers: { cookie: session } });
    assert.equal(page.status, 200, 'a viewer reads a Payment');
    const csrf = csrfOf(await page.text());
    assert.ok(csrf);
    const res = await formPost(first, `/console/payments/${p.id}/resolve`, session, {
      action: 'fail',
      reason: 'viewer tries',
      _csrf: csrf,
    });
    assert.equal(res.status, 403);
    assert.match(await res.text(), /needs the operator role/);
    assert.equal(await h.db.prisma.operatorAction.count({ where: { targetId: p.id } }), 0, 'no action, not even a refused one');
  });
});
