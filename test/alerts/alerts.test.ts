import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { alertItem, raiseAlert, resolveAlerts, syncAlerts, type AlertDeps } from '../../src/domain/monitoring/alerts';
import { createLogger } from '../../src/logger';
import { call } from '../support/api-client';
import { getHarness } from '../support/harness';
import { runCli } from '../support/cli';
import { startAdminApi, type AdminApi } from '../webhooks/support/admin';

/** The alert functions with a logger whose lines the test reads. */
async function capturing(): Promise<{ deps: AlertDeps; lines: Array<Record<string, unknown>> }> {
  const h = await getHarness();
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { deps: { prisma: h.db.prisma, logger: createLogger('info', sink) }, lines };
}

let n = 0;
const subject = (what: string) => `test:${process.pid}:${Date.now()}:${(n += 1)}:${what}`;

describe('Operator alerts', () => {
  test('an alert is recorded and logged at error level once; raised again while open it is refreshed, not repeated; after it is resolved it can be raised anew', async () => {
    const h = await getHarness();
    const { deps, lines } = await capturing();
    const s = subject('dedupe');
    const first = await raiseAlert(deps, {
      kind: 'ledger_difference',
      severity: 'warning',
      subject: s,
      details: { differenceAtomic: '5' },
    });
    const again = await raiseAlert(deps, {
      kind: 'ledger_difference',
      severity: 'critical',
      subject: s,
      details: { differenceAtomic: '-3' },
    });
    assert.equal(first.raised, true);
    assert.deepEqual(again, { alertId: first.alertId, raised: false });
    const rows = await h.db.prisma.operatorAlert.findMany({ where: { subject: s } });
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.severity, 'critical');
    assert.deepEqual(rows[0]!.details, { differenceAtomic: '-3' }); // what was seen last
    const errors = lines.filter((l) => l.level === 'error');
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.alertId, first.alertId);
    assert.equal(errors[0]!.subject, s);

    assert.equal(await resolveAlerts(deps, 'ledger_difference', [s]), 1);
    assert.equal(await resolveAlerts(deps, 'ledger_difference', [s]), 0);
    const anew = await raiseAlert(deps, { kind: 'ledger_difference', severity: 'warning', subject: s, details: {} });
    assert.equal(anew.raised, true);
    assert.notEqual(anew.alertId, first.alertId);
    assert.equal(lines.filter((l) => l.level === 'error').length, 2);
  });

  test('two passes raising the same alert at once record it once', async () => {
    const h = await getHarness();
    const { deps } = await capturing();
    const s = subject('race');
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, () =>
        raiseAlert(deps, { kind: 'payment_workflow_missing', severity: 'critical', subject: s, details: {} }),
      ),
    );
    assert.equal(outcomes.filter((o) => o.raised).length, 1);
    assert.equal(await h.db.prisma.operatorAlert.count({ where: { subject: s } }), 1);
  });

  test('syncAlerts raises what a pass found and resolves the open alerts of that kind it no longer finds', async () => {
    const h = await getHarness();
    const { deps } = await capturing();
    const [a, b] = [subject('a'), subject('b')];
    const alert = (s: string) => ({ kind: 'ledger_difference' as const, severity: 'warning' as const, subject: s, details: {} });
    await syncAlerts(deps, 'ledger_difference', [alert(a), alert(b)]);
    const second = await syncAlerts(deps, 'ledger_difference', [alert(b)]);
    assert.deepEqual(second.raised, 0);
    const open = await h.db.prisma.operatorAlert.findMany({ where: { subject: { in: [a, b] } }, orderBy: { subject: 'asc' } });
    assert.deepEqual(
      open.map((o) => [o.subject, o.resolvedAt === null]),
      [
        [a, false],
        [b, true],
      ],
    );
  });
});

test('an alert names the Payment, deposit or fund return of its subject, or the Payment of an escrow book; not an address, a network or a malformed id', () => {
  const of = (subject: string, details: unknown = {}) => alertItem({ subject, details });
  assert.deepEqual(of('payment:payment_abc123'), { kind: 'payment', id: 'payment_abc123' });
  assert.deepEqual(of('deposit:deposit_abc123'), { kind: 'deposit', id: 'deposit_abc123' });
  assert.deepEqual(of('fund_return:refund_abc123'), { kind: 'fund_return', id: 'refund_abc123' });
  assert.deepEqual(of('31337:0xtoken:0xescrow', { book: 'escrow:payment_abc123' }), { kind: 'payment', id: 'payment_abc123' });
  assert.equal(of('31337:0xtoken:0xtreasury', { book: null }), null);
  assert.equal(of('31337:0xtreasury'), null);
  assert.equal(of('payment:deposit_abc123'), null);
  assert.equal(of('deposit:../../admin'), null);
});

describe('Operator alerts: admin API and CLI', () => {
  let admin: AdminApi;
  const ids: Record<string, string> = {};
  before(async () => {
    admin = await startAdminApi({ allowPrivate: false });
    const { deps } = await capturing();
    for (const name of ['resolved', 'older', 'newer']) {
      ids[name] = (
        await raiseAlert(deps, { kind: 'ledger_difference', severity: 'warning', subject: subject(name), details: { name } })
      ).alertId;
      await new Promise((r) => setTimeout(r, 5)); // distinct createdAt (ms), so "newest first" is one order
    }
    const resolved = await deps.prisma.operatorAlert.findUniqueOrThrow({ where: { id: ids.resolved! } });
    await resolveAlerts(deps, 'ledger_difference', [resolved.subject]);
  });
  after(() => admin.close());

  test('GET /admin/v1/alerts lists alerts newest first, ?open=true only unresolved ones, pages with nextCursor', async () => {
    const all = await admin.call('GET', '/admin/v1/alerts?limit=100');
    assert.equal(all.status, 200);
    const listed = all.body.items.map((a: { id: string }) => a.id);
    assert.deepEqual(
      listed.filter((id: string) => Object.values(ids).includes(id)),
      [ids.newer, ids.older, ids.resolved],
    );
    const open = await admin.call('GET', '/admin/v1/alerts?open=true&kind=ledger_difference&limit=100');
    const openIds = open.body.items.map((a: { id: string }) => a.id);
    assert.ok(openIds.includes(ids.newer) && openIds.includes(ids.older));
    assert.equal(openIds.includes(ids.resolved), false);
    assert.ok(
      open.body.items.every((a: { resolvedAt: string | null; kind: string }) => a.resolvedAt === null && a.kind === 'ledger_difference'),
    );

    const first = await admin.call('GET', '/admin/v1/alerts?limit=1');
    assert.equal(first.body.items.length, 1);
    assert.equal(typeof first.body.nextCursor, 'string');
    const second = await admin.call('GET', `/admin/v1/alerts?limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    assert.equal(second.status, 200);
    assert.notEqual(second.body.items[0].id, first.body.items[0].id);
  });

  test('GET /admin/v1/alerts/{id} answers the alert; unknown ids, bad filters, missing tokens and wrong methods answer the error envelope', async () => {
    const one = await admin.call('GET', `/admin/v1/alerts/${ids.older}`);
    assert.equal(one.status, 200);
    assert.deepEqual(Object.keys(one.body.alert).sort(), [
      'createdAt',
      'details',
      'id',
      'kind',
      'resolvedAt',
      'severity',
      'subject',
      'updatedAt',
    ]);
    assert.deepEqual(
      [one.body.alert.id, one.body.alert.kind, one.body.alert.severity, one.body.alert.details],
      [ids.older, 'ledger_difference', 'warning', { name: 'older' }],
    );

    const missing = await admin.call('GET', '/admin/v1/alerts/alert_doesNotExist000000000000');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'not_found');
    const bad = await admin.call('GET', '/admin/v1/alerts?open=maybe');
    assert.equal(bad.status, 400);
    assert.deepEqual(
      bad.body.error.details.fields.map((f: { field: string }) => f.field),
      ['query.open'],
    );
    const anonymous = await admin.call('GET', '/admin/v1/alerts', undefined, null);
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.body.error.code, 'unauthorized');
    const wrongToken = await admin.call('GET', '/admin/v1/alerts', undefined, 'not-the-admin-token-0123456789abcdefghij');
    assert.equal(wrongToken.status, 401);
    const withoutToken = await call('/admin/v1/alerts'); // the partner port serves no admin API
    assert.equal(withoutToken.status, 404);
    assert.equal(withoutToken.body.error.code, 'not_found');
    const post = await admin.call('POST', '/admin/v1/alerts', {});
    assert.equal(post.status, 405);
    assert.equal(post.body.error.code, 'method_not_allowed');
  });

  test('`alerts list --open` prints one JSON object with the open alerts and not the resolved one', async () => {
    const { stdout } = await runCli(['alerts', 'list', '--open', '--limit', '100']);
    const lines = stdout.trim().split('\n');
    assert.equal(lines.length, 1, stdout);
    const listed = (JSON.parse(lines[0]!) as { items: Array<{ id: string; resolvedAt: string | null }> }).items;
    const ours = listed.filter((a) => Object.values(ids).includes(a.id)).map((a) => a.id);
    assert.deepEqual(ours, [ids.newer, ids.older]);
  });
});
