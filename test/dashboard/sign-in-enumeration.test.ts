import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newApp } from '../support/api-client';
import { getHarness, TEST_SERVICE_SECRET } from '../support/harness';
import { requestSignInCode } from '../../src/domain/dashboard/sign-in';
import { startDashboardApi } from './support';

/** Headers whose values move with each request, whoever asks: the date, its id, and the per-address quota left. */
const PER_REQUEST = ['date', 'x-request-id', 'ratelimit-remaining', 'ratelimit-reset'];

/** An answer with what differs by request alone masked: those headers' values, csrf and cookie values, the email. */
async function comparable(res: Response, email: string) {
  const headers = Object.fromEntries(
    [...res.headers.entries()]
      .filter(([name]) => name !== 'set-cookie')
      .map(([name, value]) => [name, PER_REQUEST.includes(name) ? '<per request>' : value.replaceAll(email, '<email>')]),
  );
  const cookies = res.headers
    .getSetCookie()
    .map((c) => c.replace(/^([^=]+)=[^;]*/, '$1=<value>').replace(/expires=[^;]+/i, 'expires=<date>'));
  const body = (await res.text()).replaceAll(email, '<email>').replace(/name="_csrf" value="[^"]*"/g, 'name="_csrf" value="<csrf>"');
  return { status: res.status, headers, cookies, body };
}

describe('Dashboard sign-in: asking for a code tells no one who is a member', () => {
  let api: Awaited<ReturnType<typeof startDashboardApi>>;
  before(async () => {
    api = await startDashboardApi();
  });
  after(async () => {
    await api?.close();
  });

  async function askForCode(email: string): Promise<Response> {
    const form = await fetch(`${api.baseUrl}/dashboard/login`);
    const cookie = form.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
    return fetch(`${api.baseUrl}/dashboard/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email, _csrf: csrf }).toString(),
    });
  }

  test('a member and a stranger get the same answer (status, headers, cookies, page) and each a code row written; only the member is mailed', async () => {
    const h = await getHarness();
    const app = await newApp();
    // Of one length, so even Content-Length can't differ.
    const stamp = Date.now();
    const member = `member-${stamp}@partner.example`;
    const stranger = `others-${stamp}@partner.example`;
    await api.invite(app.appId, member, 'viewer');

    const before = h.mailbox.received.length;
    const memberAnswer = await comparable(await askForCode(member), member);
    const strangerAnswer = await comparable(await askForCode(stranger), stranger);
    assert.equal(memberAnswer.status, 200);
    assert.deepEqual(strangerAnswer, memberAnswer);

    // The same work: one live code row each, made the same way.
    const rows = async (email: string) =>
      (await h.db.prisma.partnerSignInCode.findMany({ where: { email } })).map((r) => ({
        live: r.usedAt === null,
        attempts: r.attempts,
        hashed: /^[0-9a-f]{64}$/.test(r.codeHash),
        ttlMs: r.expiresAt.getTime() - r.createdAt.getTime(),
      }));
    assert.deepEqual(await rows(stranger), await rows(member));
    assert.equal((await rows(member)).length, 1);

    await h.mailbox.next(member, before);
    assert.equal(h.mailbox.received.slice(before).filter((m) => m.to.includes(stranger)).length, 0, 'a stranger is never mailed a code');
  });

  test("the answer does not wait for the mail: a send that never finishes still answers 'sent'", async () => {
    const h = await getHarness();
    const app = await newApp();
    const email = `slow-mail-${Date.now()}@partner.example`;
    await api.invite(app.appId, email, 'viewer');
    let sends = 0;
    const stuck = {
      send: () => {
        sends += 1;
        return new Promise<void>(() => undefined);
      },
    };
    const request = await requestSignInCode({ prisma: h.db.prisma, serviceSecret: TEST_SERVICE_SECRET, mailer: stuck }, email);
    assert.equal(request.outcome, 'sent');
    assert.equal(sends, 1, 'the send was started');
    const stranger = await requestSignInCode(
      { prisma: h.db.prisma, serviceSecret: TEST_SERVICE_SECRET, mailer: stuck },
      `nobody-${Date.now()}@partner.example`,
    );
    assert.equal(stranger.outcome, 'no_access');
    assert.equal(sends, 1, 'nothing is sent to a stranger');
    assert.equal(await stranger.mailing, null);
  });

  test('a failed send settles mailing with its error, and never rejects', async () => {
    const h = await getHarness();
    const app = await newApp();
    const email = `failing-mail-${Date.now()}@partner.example`;
    await api.invite(app.appId, email, 'viewer');
    const failing = { send: () => Promise.reject(new Error('relay refused')) };
    const request = await requestSignInCode({ prisma: h.db.prisma, serviceSecret: TEST_SERVICE_SECRET, mailer: failing }, email);
    assert.equal(request.outcome, 'sent');
    assert.equal((await request.mailing)?.message, 'relay refused');
  });
});
