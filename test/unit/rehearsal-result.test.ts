import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { outagesOf, resultOf, resultTable, TABLE_END, TABLE_START, withTable, type RehearsalResult } from '../../simulate/rehearsal/result';

const result: RehearsalResult = {
  ok: true,
  deployment: 'production',
  commit: 'abc1234',
  date: '2026-11-29',
  seconds: 400,
  loadSeconds: 200,
  loops: 3,
  flowsPerSecond: 1.5,
  plants: [],
  flows: { receive: 10 },
  bounds: { backMs: 60_000, paymentMs: 180_000 },
  outages: outagesOf([{ part: 'postgres', what: "SIGKILL PostgreSQL's postmaster", at: 1_000, backAt: 4_000, paymentAt: 21_000 }]),
  failovers: 2,
  unavailable503: 1,
  unplannedHolds: [],
  releasedHolds: ['payment pay_1: settlement_requires_intervention'],
  events: { committed: 10, delivered: 10, duplicates: 0, failedOnPurpose: 3 },
  payouts: { service: 1, provider: 1 },
  ledger: { postings: 5, problems: 0 },
  reconcile: { checked: 9, differences: 0 },
  failures: [],
};

describe('Rehearsal result line and table', () => {
  test('the result is the last bare JSON line naming its deployment, whatever precedes it', () => {
    const output = `rehearsal passed in 400 s\n{"not":"it"}\n${JSON.stringify(result)}\n`;
    assert.deepEqual(resultOf(output), result);
    assert.throws(() => resultOf('summary: {"deployment":"production"}'), /no rehearsal result line/);
  });

  test('each outage is named by the part it killed, with both times', () => {
    assert.deepEqual(result.outages, [
      { part: 'postgres', what: "SIGKILL PostgreSQL's postmaster", backAfterMs: 3_000, paymentAfterMs: 20_000 },
    ]);
    assert.match(resultTable(result), /\| Fault: postgres \| back after 3\.0 s, a Payment succeeded after 20\.0 s \|/);
  });

  test('the planned holds are counted, each released by the operator', () => {
    assert.match(resultTable(result), /\| Planned holds \| 1, each released by the operator through the CLI \|/);
  });

  test('the table replaces what is between the markers and nothing else', () => {
    const page = `before\n${TABLE_START}\nold table\n${TABLE_END}\nafter\n`;
    const next = withTable(page, '| new |');
    assert.equal(next, `before\n${TABLE_START}\n| new |\n${TABLE_END}\nafter\n`);
    assert.throws(() => withTable('no markers', '| x |'), /markers/);
  });
});
