import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import fc from 'fast-check';
import { checkLedger } from '../../src/domain/ledger/check';
import { call, type ApiResponse } from '../support/api-client';
import { eventually, newPayer, payTo, tokenBalance } from '../support/chain';
import { getHarness } from '../support/harness';
import { assertBooksMatchChain, booksBaseline } from '../support/books';
import { createPayment, newMerchant, waitForPayment, type Merchant } from '../support/fixtures';
import { fundedVault, post } from '../refunds/support';

/**
 * Money leaves only to where it should, whatever the order: refunds of one Payment (paid from the
 * recipient's vault), recoveries of its incidents (from its escrow) and vault fundings of other
 * Payments (from the same vault), in arbitrary waves of concurrent requests, on the real app,
 * PostgreSQL, Temporal and anvil. MONEY_OUT_RUNS (default 3) sets the runs; the seed is printed as the
 * file loads, and MONEY_OUT_SEED replays it.
 */
const RUNS = Number(process.env.MONEY_OUT_RUNS ?? 3);
const SEED = process.env.MONEY_OUT_SEED === undefined ? randomInt(2 ** 31) : Number(process.env.MONEY_OUT_SEED);
if (!Number.isSafeInteger(SEED)) throw new Error(`MONEY_OUT_SEED must be an integer, got ${process.env.MONEY_OUT_SEED}`);
console.log(
  `# money-out property: seed ${SEED}, ${RUNS} runs; replay with MONEY_OUT_SEED=${SEED} MONEY_OUT_RUNS=${RUNS} TEST_FILTER=test/properties/money-out npm test`,
);

const USDC = 1_000_000;
/** Every transfer that must count is at least the 1 USDC minimum (smaller ones are dust). */
const atLeastOne = (max: number) => fc.integer({ min: USDC, max });

/** Mostly the addresses the rules allow, sometimes one they refuse. */
const often = <T, U>(allowed: T[], refused: U[]) =>
  fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...allowed) }, { weight: 1, arbitrary: fc.constantFrom(...refused) });

const op = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('refund' as const),
      to: often(['first', 'second'] as const, ['stranger', 'unnamed'] as const),
      atomic: fc.option(
        fc.integer({ min: 1, max: 200 }).map((cents) => cents * 10_000),
        { nil: null },
      ),
    }),
  },
  fc.record({
    kind: fc.constant('recover' as const),
    incident: fc.nat(3),
    to: often(['payer', 'unnamed'] as const, ['other_payer', 'stranger'] as const),
  }),
  fc.record({ kind: fc.constant('fund' as const), target: often(['first', 'second'] as const, ['refunded'] as const) }),
);
type Op = typeof op extends fc.Arbitrary<infer T> ? T : never;

const plan = fc.record({
  amount: fc.integer({ min: 2 * USDC, max: 5 * USDC }),
  /** The first payer's share of the amount; the second pays the rest (none: the first pays it all). */
  firstPart: fc.integer({ min: 0, max: 1000 }),
  twoPayers: fc.boolean(),
  /** More than the amount: the second payer (or the only one) overpays, the first sends once more. */
  overpaid: fc.option(atLeastOne(2 * USDC), { nil: null }),
  again: fc.option(atLeastOne(2 * USDC), { nil: null }),
  /** Whole USDC, as fundedVault sends them. */
  vaultHeld: fc.integer({ min: 2, max: 10 }),
  limit: fc.integer({ min: 2 * USDC, max: 10 * USDC }),
  fundings: fc.tuple(atLeastOne(3 * USDC), atLeastOne(3 * USDC)),
  waves: fc.array(fc.array(op, { minLength: 2, maxLength: 4 }), { minLength: 1, maxLength: 3 }),
});
type Plan = typeof plan extends fc.Arbitrary<infer T> ? T : never;

const lower = (a: string) => a.toLowerCase();
const sum = (xs: bigint[]) => xs.reduce((acc, x) => acc + x, 0n);

/** Pays the receive Payment as planned and waits until it succeeded with its incidents recorded. */
async function paidByPlan(m: Merchant, p: Plan) {
  const answer = (await createPayment(m, { amount: (p.amount / USDC).toFixed(6) })).body;
  const created = answer.payment;
  const escrow = created.funding.depositAddress.address as string;
  const first = p.twoPayers ? USDC + Math.floor(((p.amount - 2 * USDC) * p.firstPart) / 1000) : p.amount;
  const sends: Array<[number, number]> = [[0, first]];
  if (p.twoPayers) sends.push([1, p.amount - first + (p.overpaid ?? 0)]);
  else if (p.overpaid) sends.push([0, p.overpaid]);
  if (p.again) sends.push([0, p.again]);
  const sent = [0, 1].map((who) => sum(sends.filter(([w]) => w === who).map(([, a]) => BigInt(a))));
  const payers = [await newPayer(sent[0]!), await newPayer(sent[1]!)];
  for (const [who, atomic] of sends) await payTo(payers[who]!, escrow, BigInt(atomic));
  const held = sent[0]! + sent[1]! - BigInt(p.amount);
  const payment = await waitForPayment(
    m,
    created.id,
    'succeeded, its incidents recorded',
    (x) => x.status === 'succeeded' && x.incidentRecoverySummary.requestedAmountAtomic === String(held),
  );
  return { payment, secret: answer.checkout.clientSecret as string, escrow, payers, sent };
}

interface Payer {
  accountId: string;
  token: string;
}

/** What a request was answered, and whether it was taken (a return created, a funding authorized). */
interface Outcome {
  res: ApiResponse;
  taken: boolean;
}

/**
 * The vault's account pays a Payment with its Vault option, as a client does: read the option and
 * authorize it. An option not offered (or not payable now) is a refusal too.
 */
async function fundFromVault(payer: Payer, payment: { id: string; secret: string }): Promise<Outcome> {
  const headers = { authorization: `Bearer ${payer.token}`, 'x-svc-payment-secret': payment.secret };
  const read = await call(`/v2/client/me/payments/${payment.id}`, { headers });
  if (read.status !== 200) return { res: read, taken: false };
  const option = (read.body.options as Array<{ id: string; paymentMethodType: string; execution: { actionId: string } | null }>).find(
    (o) => o.paymentMethodType === 'vault',
  );
  if (!option?.execution) return { res: read, taken: false };
  const res = await call(`/v2/client/me/payments/${payment.id}/options/${option.id}/authorize`, {
    headers: { ...headers, 'idempotency-key': `money-out-${payment.id}-${randomInt(2 ** 31)}` },
    body: { actionId: option.execution.actionId, proof: { type: 'managed_authorization', authorization: 'approved' } },
  });
  return { res, taken: res.status === 200 };
}

const created = (res: ApiResponse): Outcome => ({ res, taken: res.status === 201 });

async function runPlan(p: Plan): Promise<string> {
  const h = await getHarness();
  const baseline = await booksBaseline();
  const recipient = await newMerchant();
  const vault = await fundedVault(recipient, p.vaultHeld, BigInt(p.limit));
  const vaultHeld = BigInt(p.vaultHeld * USDC);
  const { payment: refunded, secret, escrow, payers, sent } = await paidByPlan(recipient, p);
  const stranger = (await newPayer(0n)).address;
  const seller = await newMerchant(recipient.cred);
  const targets = await Promise.all(
    p.fundings.map(async (atomic) => {
      const res = await createPayment(seller, { amount: (atomic / USDC).toFixed(6) });
      assert.equal(res.status, 201, res.text);
      return {
        id: res.body.payment.id as string,
        secret: res.body.checkout.clientSecret as string,
        escrow: lower(res.body.payment.funding.depositAddress.address),
        atomic: BigInt(atomic),
      };
    }),
  );
  const exchanged = await call('/v2/client/auth/exchange', { credential: recipient.cred, body: { accountId: recipient.accountId } });
  assert.equal(exchanged.status, 200, exchanged.text);
  const vaultPayer = { accountId: recipient.accountId, token: exchanged.body.accessToken as string };
  const incidents = (await call(`/v2/payments/${refunded.id}/incidents`, { credential: recipient.cred })).body.items as Array<{
    id: string;
    fromAddress: string;
    amount: { amountAtomic: string };
  }>;
  const payerAddress = (name: 'first' | 'second') => payers[name === 'first' ? 0 : 1]!.address;
  const before = await Promise.all([...payers.map((w) => tokenBalance(w.address)), tokenBalance(vault.address), tokenBalance(escrow)]);

  const attempt = (o: Op): Promise<Outcome> | null => {
    if (o.kind === 'refund') {
      const to = o.to === 'stranger' ? stranger : o.to === 'unnamed' ? undefined : payerAddress(o.to);
      return post(recipient, `/v2/payments/${refunded.id}/refunds`, {
        ...(o.atomic === null ? {} : { amount: (o.atomic / USDC).toFixed(6) }),
        ...(to ? { destinationAddress: to } : {}),
      }).then(created);
    }
    if (o.kind === 'recover') {
      const incident = incidents[o.incident % Math.max(incidents.length, 1)];
      if (!incident) return null;
      const other = payers.map((w) => lower(w.address)).find((a) => a !== incident.fromAddress)!;
      const to = { payer: incident.fromAddress, other_payer: other, stranger, unnamed: undefined }[o.to];
      return post(recipient, `/v2/payments/${refunded.id}/incident-recoveries`, {
        incidentId: incident.id,
        ...(to ? { destinationAddress: to } : {}),
      }).then(created);
    }
    return fundFromVault(vaultPayer, o.target === 'refunded' ? { id: refunded.id, secret } : targets[o.target === 'first' ? 0 : 1]!);
  };
  const answers: Array<{ op: Op } & Outcome> = [];
  for (const wave of p.waves) {
    const ran = await Promise.all(
      wave.map(async (o) => {
        const outcome = await attempt(o);
        return outcome ? [{ op: o, ...outcome }] : [];
      }),
    );
    answers.push(...ran.flat());
  }
  for (const { op: o, res } of answers) assert.ok(res.status < 500, `${JSON.stringify(o)}: ${res.status} ${res.text}`);

  // Everything accepted finishes: every return confirmed, every vault funding confirmed and its Payment succeeded.
  const settled = await eventually(async (saw) => {
    const returns = await h.db.prisma.fundReturn.findMany({ where: { paymentId: refunded.id } });
    const fundings = await h.db.prisma.vaultFundingOperation.findMany({ where: { vaultId: vault.id } });
    saw({ returns: returns.map((r) => r.status), fundings: fundings.map((f) => f.status) });
    if (![...returns, ...fundings].every((x) => x.status === 'confirmed')) return undefined;
    return { returns, fundings };
  }, 'every accepted return and vault funding confirmed');
  for (const f of settled.fundings) await waitForPayment(seller, f.paymentId, 'succeeded', (x) => x.status === 'succeeded');

  const refunds = settled.returns.filter((r) => r.kind === 'refund');
  const recoveries = settled.returns.filter((r) => r.kind === 'incident_recovery');
  const amount = (r: { amountAtomic: { toFixed(): string } }) => BigInt(r.amountAtomic.toFixed());
  const payerSet = new Set(payers.filter((_, i) => sent[i]! > 0n).map((w) => lower(w.address)));

  // Refunds: never more than the Payment, only to its payers, each never more than it paid.
  assert.ok(sum(refunds.map(amount)) <= BigInt(p.amount), 'refunds total more than the Payment');
  for (const r of refunds) assert.ok(payerSet.has(r.toAddress), `a refund to ${r.toAddress}`);
  // Recoveries: each incident once, to the payer whose money it holds, never more than was overpaid.
  assert.ok(
    sum(recoveries.map(amount)) <= sent[0]! + sent[1]! - BigInt(p.amount),
    'recoveries total more than the Payment received past its amount',
  );
  const byIncident = new Map(incidents.map((i) => [i.id, i]));
  assert.equal(new Set(recoveries.map((r) => r.incidentId)).size, recoveries.length, 'an incident recovered twice');
  for (const r of recoveries) {
    const incident = byIncident.get(r.incidentId!)!;
    assert.equal(r.toAddress, incident.fromAddress);
    assert.equal(amount(r), BigInt(incident.amount.amountAtomic));
  }
  // The vault: what left it is no more than it held or its policy allows, and only to the payers or
  // to the escrow of a Payment it funded, each once and for its amount.
  const fromVault = await h.db.prisma.settlementLeg.findMany({ where: { fromAddress: lower(vault.address) } });
  const fundingLegs = fromVault.filter((l) => l.sourceType === 'vault_funding');
  assert.equal(fundingLegs.length, settled.fundings.length);
  assert.equal(new Set(settled.fundings.map((f) => f.paymentId)).size, settled.fundings.length, 'a Payment funded twice');
  for (const f of settled.fundings) {
    const target = targets.find((t) => t.id === f.paymentId);
    assert.ok(target, `a funding of ${f.paymentId}`);
    assert.equal(f.toAddress, target.escrow);
    assert.equal(amount(f), target.atomic);
  }
  for (const l of fromVault)
    assert.ok(
      l.sourceType === 'vault_funding' ? targets.some((t) => t.escrow === l.toAddress) : payerSet.has(l.toAddress),
      `a vault leg to ${l.toAddress}`,
    );
  const outOfVault = sum(fromVault.map(amount));
  assert.equal(outOfVault, sum(refunds.map(amount)) + sum(settled.fundings.map(amount)));
  assert.ok(outOfVault <= vaultHeld, `${outOfVault} left a vault holding ${vaultHeld}`);
  assert.ok(outOfVault <= BigInt(p.limit), `${outOfVault} left a vault whose policy allows ${p.limit}`);

  // On chain: each payer got back what the books say, and never more than it sent; nobody else got anything.
  const after = await Promise.all([...payers.map((w) => tokenBalance(w.address)), tokenBalance(vault.address), tokenBalance(escrow)]);
  payers.forEach((w, i) => {
    const mine = (r: { toAddress: string }) => r.toAddress === lower(w.address);
    const back = sum(settled.returns.filter(mine).map(amount));
    assert.equal(after[i]! - before[i]!, back, `payer ${i} on chain`);
    assert.ok(back <= sent[i]!, `payer ${i} got back ${back} of the ${sent[i]} it sent`);
    // Of what it sent, its incidents are returned by recovery; refunds return only what counted for the Payment.
    const counted = sent[i]! - sum(incidents.filter((x) => x.fromAddress === lower(w.address)).map((x) => BigInt(x.amount.amountAtomic)));
    assert.ok(
      sum(refunds.filter(mine).map(amount)) <= counted,
      `payer ${i} refunded ${sum(refunds.filter(mine).map(amount))} of the ${counted} that counted`,
    );
  });
  assert.equal(await tokenBalance(stranger), 0n);
  assert.equal(after[2], before[2]! - outOfVault);
  assert.equal(after[3], before[3]! - sum(recoveries.map(amount)));

  await assertBooksMatchChain({ baseline });
  const checked = await checkLedger(h.db.prisma);
  assert.equal(checked.ok, true, JSON.stringify(checked.problems));
  const tally = (kind: Op['kind']) =>
    `${kind} ${answers.filter((a) => a.op.kind === kind && a.taken).length}/${answers.filter((a) => a.op.kind === kind).length}`;
  const refusals = answers
    .filter((a) => !a.taken)
    .map(
      (a) =>
        `${a.op.kind}:${a.res.body?.error?.details?.reasonCode ?? a.res.body?.error?.code ?? (a.res.body?.options ? 'option not payable' : a.res.status)}`,
    );
  return `${sent[1]! > 0n ? 2 : 1} payer(s), ${incidents.length} incident(s), ${p.waves.length} wave(s); taken: ${['refund', 'recover', 'fund'].map((k) => tally(k as Op['kind'])).join(', ')}; refused: ${refusals.join(' ') || 'none'}; ${outOfVault} left the vault`;
}

describe('Property: money leaves only to where it should, across refunds, recoveries and vault fundings', () => {
  test('whatever the interleaving, what leaves the vault and the escrow never passes what was received or what the policy allows, and reaches only the payers and the funded Payments; the books match the chain after each run', async (t) => {
    t.diagnostic(`seed ${SEED}, ${RUNS} runs`);
    await fc.assert(
      fc.asyncProperty(plan, async (p) => t.diagnostic(await runPlan(p))),
      { numRuns: RUNS, seed: SEED },
    );
  });
});
