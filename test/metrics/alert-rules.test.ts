import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { parser as promql } from '@prometheus-io/lezer-promql';
import { startAdminApi, METRICS_TOKEN, type AdminApi } from '../webhooks/support/admin';
import { parseExposition } from './support/scrape';

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: { severity: string };
  annotations: { summary: string };
}

const RULES_FILE = path.join(__dirname, '..', '..', 'ops', 'prometheus', 'alerts.yml');

/** The metric names an expression selects, or the offsets where PromQL's grammar refuses it. */
function readExpr(expr: string): { errors: number[]; metrics: string[] } {
  const errors: number[] = [];
  const metrics: string[] = [];
  promql.parse(expr).iterate({
    enter: (node) => {
      if (node.type.isError) errors.push(node.from);
      if (node.name === 'Identifier') metrics.push(expr.slice(node.from, node.to));
    },
  });
  return { errors, metrics };
}

describe('The alerting rules docs/operations.md names (ops/prometheus/alerts.yml)', () => {
  let admin: AdminApi;
  before(async () => {
    admin = await startAdminApi({ allowPrivate: true });
  });
  after(() => admin.close());

  test('are a Prometheus rules file whose every expression parses and selects only series /metrics serves', async () => {
    const doc = parseYaml(readFileSync(RULES_FILE, 'utf8')) as { groups: Array<{ name: string; rules: Rule[] }> };
    const rules = doc.groups.flatMap((g) => g.rules);
    assert.deepEqual(
      ['PaymentHoldWaiting', 'LedgerReconcileDifference', 'ChainScannerLagging', 'WebhookBacklog'].filter(
        (a) => !rules.some((r) => r.alert === a),
      ),
      [],
      'the four alerts docs/operations.md names',
    );
    const res = await fetch(`${admin.adminBaseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    assert.equal(res.status, 200);
    const served = new Set(parseExposition(await res.text()).families.map((f) => f.name));
    for (const rule of rules) {
      assert.match(rule.alert, /^[A-Z][A-Za-z]+$/);
      assert.ok(['page', 'ticket'].includes(rule.labels.severity), `${rule.alert}: severity`);
      assert.ok(rule.annotations.summary.length > 0, `${rule.alert}: summary`);
      if (rule.for !== undefined) assert.match(rule.for, /^\d+[smh]$/, `${rule.alert}: for`);
      const { errors, metrics } = readExpr(rule.expr);
      assert.deepEqual(errors, [], `${rule.alert}: ${rule.expr} does not parse`);
      assert.ok(metrics.length > 0, `${rule.alert} selects a metric`);
      for (const m of metrics) assert.ok(served.has(m), `${rule.alert} selects ${m}, which /metrics does not serve`);
    }
  });
});
