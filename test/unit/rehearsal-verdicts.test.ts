import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { plantFault, PLANTS, type Observations } from '../../simulate/rehearsal/plant';
import {
  depositVerdicts,
  eventVerdicts,
  holdVerdicts,
  releasedHoldVerdicts,
  type ReleasedHold,
  outageVerdicts,
  paymentVerdicts,
  payoutVerdicts,
  unavailableVerdicts,
  type ObservedPayment,
  type PlannedPayment,
  type Window,
} from '../../simulate/rehearsal/verdicts';

const planned: PlannedPayment[] = [
  { id: 'p1', plan: 'paid_in_full', flow: 'receive', paidAtomic: 10_000_000n, amountAtomic: 10_000_000n },
  { id: 'p2', plan: 'overpaid', flow: 'overpay', paidAtomic: 12_000_000n, amountAtomic: 10_000_000n },
  { id: 'p3', plan: 'underpaid', flow: 'underpay', paidAtomic: 4_000_000n, amountAtomic: 10_000_000n },
  { id: 'p4', plan: 'expire', flow: 'expire', paidAtomic: 0n, amountAtomic: 10_000_000n },
  { id: 'p5', plan: 'cancel', flow: 'cancel', paidAtomic: 0n, amountAtomic: 10_000_000n },
];

const observed = (id: string, o: Partial<ObservedPayment>): [string, ObservedPayment] => [
  id,
  {
    id,
    status: 'succeeded',
    held: false,
    reason: null,
    merchantNetAtomic: 9_850_000n,
    settledOnChainAtomic: null,
    incidents: [],
    recoveries: [],
    ...o,
  },
];

const clean = (): Observations => ({
  planned,
  payments: new Map([
    observed('p1', { settledOnChainAtomic: 9_850_000n }),
    observed('p2', {
      settledOnChainAtomic: 9_850_000n,
      incidents: [{ kind: 'excess', amountAtomic: 2_000_000n }],
      recoveries: [{ status: 'confirmed', amountAtomic: 2_000_000n, onChainAtomic: 2_000_000n }],
    }),
    observed('p3', {
      status: 'expired',
      incidents: [{ kind: 'underpaid_expired', amountAtomic: 4_000_000n }],
      recoveries: [{ status: 'confirmed', amountAtomic: 4_000_000n, onChainAtomic: 4_000_000n }],
    }),
    observed('p4', { status: 'expired' }),
    observed('p5', { status: 'cancelled' }),
  ]),
  events: { sandbox: { committed: [{ id: 'e1', name: 'payment.succeeded' }], receipts: [{ id: 'e1', at: 1_000 }] } },
  servicePayouts: [{ paymentId: 'p9', payoutId: 'po1', sourceAtomic: 20_000_000n }],
  providerPayouts: [{ paymentId: 'p9', payoutId: 'po1', amountAtomic: 20_000_000n }],
});

/** Every verdict over the observations, as the rehearsal judges them. */
function judge(o: Observations): string[] {
  return [
    ...paymentVerdicts(o.planned, o.payments),
    ...Object.entries(o.events).flatMap(([endpoint, e]) => eventVerdicts(endpoint, e, []).failures),
    ...payoutVerdicts(o.servicePayouts, o.providerPayouts),
  ];
}

describe('Rehearsal verdicts (pure)', () => {
  test('a clean run passes every check', () => {
    assert.deepEqual(judge(clean()), []);
  });

  test('each planted fault fails the run, naming what it broke', () => {
    const expected: Record<(typeof PLANTS)[number], RegExp> = {
      'skipped-settlement': /Payment p1 .*succeeded without a settlement transaction/,
      'dropped-event': /event e1 .*never delivered/,
      'double-payout': /payout of Payment p9: 2 payouts in the provider's records/,
    };
    for (const plant of PLANTS) {
      const failures = judge(plantFault(plant, clean()));
      assert.equal(failures.length, 1, `${plant}: ${failures.join('; ')}`);
      assert.match(failures[0]!, expected[plant]);
    }
  });

  test('a Payment paid in full that ended otherwise, or settled short on chain, fails', () => {
    const o = clean();
    o.payments.set('p1', { ...o.payments.get('p1')!, status: 'expired', settledOnChainAtomic: null });
    assert.match(judge(o).join('\n'), /Payment p1 \(receive, paid_in_full\): expired, planned succeeded/);
    o.payments.set('p1', { ...o.payments.get('p1')!, status: 'succeeded', settledOnChainAtomic: 9_849_999n });
    assert.match(judge(o).join('\n'), /moved 9849999 to the recipient on chain, its net is 9850000/);
  });

  test('a recovery short by one unit on chain fails; so does a missing incident', () => {
    const o = clean();
    o.payments.set('p2', {
      ...o.payments.get('p2')!,
      recoveries: [{ status: 'confirmed', amountAtomic: 2_000_000n, onChainAtomic: 1_999_999n }],
    });
    o.payments.set('p3', { ...o.payments.get('p3')!, incidents: [] });
    const failures = judge(o);
    assert.equal(failures.length, 2);
    assert.match(failures[0]!, /p2 .*recovered 2000000 \(1999999 on chain\)/);
    assert.match(failures[1]!, /p3 .*incidents \[\], planned \[underpaid_expired:4000000\]/);
  });

  test('each transfer to a deposit address is one deposit of its amount, settled, its net moved on chain to the unit', () => {
    const planned = [
      { txHash: '0xAA', amountAtomic: 5_000_000n },
      { txHash: '0xbb', amountAtomic: 3_000_000n },
    ];
    const settled = (id: string, amountAtomic: bigint, settledOnChainAtomic: bigint | null) => ({
      id,
      status: 'settled',
      amountAtomic,
      netAtomic: amountAtomic - 75_000n,
      settledOnChainAtomic,
    });
    const clean = new Map([
      ['0xaa', [settled('dep_1', 5_000_000n, 4_925_000n)]],
      ['0xbb', [settled('dep_2', 3_000_000n, 2_925_000n)]],
    ]);
    assert.deepEqual(depositVerdicts(planned, clean), []);
    const short = new Map([...clean, ['0xbb', [settled('dep_2', 3_000_000n, 2_924_999n)]]]);
    assert.match(depositVerdicts(planned, short).join(), /moved 2924999 on chain, its net is 2925000 \(dep_2\)/);
    const twice = new Map([...clean, ['0xaa', [settled('dep_1', 5_000_000n, 4_925_000n), settled('dep_3', 5_000_000n, null)]]]);
    assert.match(depositVerdicts(planned, twice).join(), /0xAA: 2 deposits recorded, planned 1/);
    const held = new Map([...clean, ['0xaa', [{ ...settled('dep_1', 5_000_000n, null), status: 'requires_intervention' }]]]);
    assert.match(depositVerdicts(planned, held).join(), /requires_intervention \(dep_1\), planned settled/);
    assert.match(depositVerdicts(planned, new Map([...clean].slice(1))).join(), /0xAA: 0 deposits recorded/);
  });

  test('anything still held at the end fails: a planned hold was released', () => {
    const held = [{ what: 'deposit b', reason: 'ledger_difference' }];
    assert.deepEqual(holdVerdicts(held), ['deposit b held requires_intervention (ledger_difference), unplanned']);
    assert.deepEqual(holdVerdicts([]), []);
  });

  test('planned holds: at least one came, each released by the operator, each released deposit settled', () => {
    const reason = 'settlement_requires_intervention';
    assert.match(releasedHoldVerdicts([], new Map()).join(), /no planned hold came/);
    const released: ReleasedHold[] = [
      { kind: 'payment', id: 'pay_1', reason },
      { kind: 'deposit', id: 'dep_1', reason },
    ];
    assert.deepEqual(releasedHoldVerdicts(released, new Map([['dep_1', 'settled']])), []);
    const failures = releasedHoldVerdicts(
      [...released, { kind: 'payment', id: 'pay_2', reason, error: 'the CLI exited 1' }],
      new Map([['dep_1', 'requires_intervention']]),
    );
    assert.equal(failures.length, 2);
    assert.match(failures[0]!, /deposit dep_1 .*released, then requires_intervention, planned settled/);
    assert.match(failures[1]!, /Payment pay_2 .*release failed: the CLI exited 1/);
  });

  test('a duplicate delivery passes only when a fault interrupted its first', () => {
    const windows: Window[] = [{ part: 'worker', at: 10_000, backAt: 20_000 }];
    const committed = [{ id: 'e1', name: 'payment.succeeded' }];
    const during = eventVerdicts(
      'sandbox',
      {
        committed,
        receipts: [
          { id: 'e1', at: 9_000 },
          { id: 'e1', at: 25_000 },
        ],
      },
      windows,
    );
    assert.deepEqual(during, { failures: [], duplicates: 1 });
    const outside = eventVerdicts(
      'sandbox',
      {
        committed,
        receipts: [
          { id: 'e1', at: 40_000 },
          { id: 'e1', at: 41_000 },
        ],
      },
      windows,
    );
    assert.equal(outside.duplicates, 1);
    assert.match(outside.failures[0]!, /delivered 2 times .*no fault/);
  });

  test('a payout the provider has no record of, or one it never got from the service, fails', () => {
    assert.match(
      payoutVerdicts([{ paymentId: 'p9', payoutId: 'po1', sourceAtomic: 1n }], []).join(),
      /0 payouts in the provider's records/,
    );
    assert.match(payoutVerdicts([], [{ paymentId: 'px', payoutId: 'po9', amountAtomic: 1n }]).join(), /po9 .*the service never made/);
  });

  test('a 503 passes only when its request overlapped a window, which ends when the part is back', () => {
    const windows: Window[] = [{ part: 'postgres', at: 10_000, backAt: 12_000 }];
    assert.deepEqual(unavailableVerdicts([{ op: 'GET /v2/payments', sentAt: 11_000, at: 13_000 }], windows), []);
    assert.deepEqual(unavailableVerdicts([{ op: 'GET /v2/payments', sentAt: 9_000, at: 10_500 }], windows), []);
    assert.equal(unavailableVerdicts([{ op: 'GET /v2/payments', sentAt: 12_500, at: 13_000 }], windows).length, 1);
  });

  test('a 503 while the service catches up after a fault passes, until its next Payment succeeded, and not after', () => {
    const windows: Window[] = [{ part: 'postgres', at: 10_000, backAt: 12_000, recoveredAt: 40_000 }];
    const cancel = (sentAt: number, at: number) => [{ op: 'POST /v2/payments/{id}/cancel', sentAt, at }];
    assert.deepEqual(unavailableVerdicts(cancel(30_000, 40_000), windows), []);
    assert.deepEqual(unavailableVerdicts(cancel(39_000, 49_000), windows), []);
    assert.equal(unavailableVerdicts(cancel(41_000, 51_000), windows).length, 1);
    // A Payment that succeeded before the part was back does not shorten the window.
    assert.deepEqual(unavailableVerdicts(cancel(11_500, 11_800), [{ ...windows[0]!, recoveredAt: 11_000 }]), []);
  });

  test('every part must be killed, come back and see a Payment succeed within the bounds', () => {
    const bounds = { backMs: 1_000, paymentMs: 5_000 };
    const ok = { part: 'api', what: 'SIGKILL api-1', at: 0, backAt: 900, paymentAt: 4_000 };
    assert.deepEqual(outageVerdicts([ok], ['api'], bounds), []);
    assert.deepEqual(outageVerdicts([ok], ['api', 'postgres'], bounds), ['postgres was never killed']);
    assert.match(outageVerdicts([{ ...ok, backAt: 1_500 }], ['api'], bounds).join(), /back after 1500 ms, bound 1000 ms/);
    assert.match(outageVerdicts([{ ...ok, paymentAt: undefined }], ['api'], bounds).join(), /no Payment succeeded after it/);
    assert.match(outageVerdicts([{ ...ok, paymentAt: 6_000 }], ['api'], bounds).join(), /succeeded 6000 ms after it, bound 5000 ms/);
  });
});
