import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Hash } from 'viem';
import { signCallback, SIGNATURE_HEADER } from '../../src/offramp/sandbox-provider/contract';
import type { AppCredential } from '../../src/domain/apps/apps';
import { call, harnessOpenApi, newApp, type ApiResponse } from '../support/api-client';
import { apiDepsOnHarness, getHarness, TEST_OFFRAMP_CALLBACK_SECRET } from '../support/harness';
import { eventually, newPayer, payTo } from '../support/chain';
import { EXAMPLE } from '../../src/http/openapi/examples';
import { fundedVault } from '../refunds/support';
import { createPayment, newMerchant, waitForPayment, type Merchant } from '../support/fixtures';
import { listenApi, withWorkerStopped } from '../support/bounded-api';
import { awayFromWindowEnd } from '../support/quota-window';
import { until } from '../support/until';

type Json = Record<string, any>;

/** One call as a partner makes it: the documented request example (ids made real) and the service's answer. */
interface RealAnswer {
  status: number;
  body: unknown;
}

/**
 * Strings whose value the contract or the configuration fixes (besides every enum and const, which
 * the schema marks). Ids, timestamps, amounts, addresses, hashes, names and secrets may differ.
 */
const FIXED_STRINGS = new Set([
  'apiVersion',
  'tokenAddress',
  'assetCode',
  'assetSymbol',
  'symbol',
  'currency',
  'networkCode',
  'chainName',
  'chainFamily',
  'assetKind',
  'tokenType',
  'type',
  'kind',
  'status',
  'providerCode',
  'paymentMethodType',
  'confirmationMode',
  'ownership',
  'ownershipVerificationMethod',
  'methods',
  'method',
  'period',
  'rail',
  'country',
]);

/** Where an example and a real answer differ: keys, JSON types, array shapes, and fixed values. */
function differences(doc: Json, schema: Json | undefined, example: unknown, real: unknown, at = ''): string[] {
  const s = resolve(doc, schema);
  const type = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  if (type(example) !== type(real))
    return [
      `${at || '(root)'}: the example has ${type(example)} ${JSON.stringify(example)?.slice(0, 80)}, the service ${type(real)} ${JSON.stringify(real)?.slice(0, 80)}`,
    ];
  if (Array.isArray(example) && Array.isArray(real)) {
    if ((example.length === 0) !== (real.length === 0))
      return [`${at}: the example has ${example.length} items, the service ${real.length}`];
    return example.length ? differences(doc, s?.items, example[0], real[0], `${at}[0]`) : [];
  }
  if (example && typeof example === 'object') {
    const e = example as Json;
    const r = real as Json;
    const props = (s?.properties ?? {}) as Json;
    const required = new Set<string>(s?.required ?? []);
    const out: string[] = [];
    for (const key of new Set([...Object.keys(e), ...Object.keys(r)])) {
      const path = at ? `${at}.${key}` : key;
      if (!(key in e) || !(key in r)) {
        // An optional field may be left out of an example, or out of an answer.
        if (required.has(key) || !(key in props)) out.push(`${path}: ${key in e ? 'only in the example' : 'missing from the example'}`);
        continue;
      }
      out.push(...differences(doc, props[key] ?? s?.additionalProperties, e[key], r[key], path));
    }
    return out;
  }
  const key = at
    .split('.')
    .pop()!
    .replace(/\[0\]$/, '');
  const fixed = typeof example !== 'string' || s?.enum !== undefined || s?.const !== undefined || FIXED_STRINGS.has(key);
  return fixed && example !== real ? [`${at}: the example says ${JSON.stringify(example)}, the service ${JSON.stringify(real)}`] : [];
}

/** A schema with its $ref followed and a nullable anyOf taken to its non-null branch. */
function resolve(doc: Json, schema: Json | undefined): Json | undefined {
  let s = schema;
  for (let i = 0; i < 10 && s; i++) {
    if (s.$ref) s = doc.components.schemas[s.$ref.split('/').pop()];
    else if (s.anyOf || s.oneOf) {
      const branches = ((s.anyOf ?? s.oneOf) as Json[]).map((b) => resolve(doc, b)).filter((b) => b && b.type !== 'null');
      s =
        branches.length === 1
          ? branches[0]
          : { ...branches[0], properties: Object.assign({}, ...branches.map((b) => b?.properties ?? {})), required: [] };
    } else break;
  }
  return s;
}

/** The example values the documented requests name, and the real ones this run uses instead. */
function substitute(value: unknown, ids: Record<string, string>): any {
  let text = JSON.stringify(value);
  for (const [example, real] of Object.entries(ids)) text = text.split(example).join(real);
  return JSON.parse(text);
}

describe('Every documented example against a real answer of the service', () => {
  const answers = new Map<string, Map<number, RealAnswer>>();
  let doc: Json;

  before(async () => {
    doc = (await harnessOpenApi()) as Json;
    await tour(doc, (operationId, res) => {
      const byStatus = answers.get(operationId) ?? new Map<number, RealAnswer>();
      byStatus.set(res.status, { status: res.status, body: res.body });
      answers.set(operationId, byStatus);
    });
  });

  test('each request example is accepted and each response example has the shape and fixed values of the real answer', () => {
    const problems: string[] = [];
    let compared = 0;
    for (const item of Object.values(doc.paths as Json)) {
      for (const op of Object.values(item as Json) as Json[]) {
        for (const [status, response] of Object.entries(op.responses as Json)) {
          if ((response as Json).$ref) continue;
          const media = (response as Json).content?.['application/json'];
          for (const example of Object.values((media?.examples ?? {}) as Json)) {
            const real = answers.get(op.operationId)?.get(Number(status));
            if (!real) {
              problems.push(`${op.operationId} ${status}: no real answer (the tour below sends its request example)`);
              continue;
            }
            compared += 1;
            for (const d of differences(doc, media.schema, (example as Json).value, real.body))
              problems.push(`${op.operationId} ${status} ${d}`);
          }
        }
      }
    }
    assert.deepEqual(problems, []);
    assert.ok(compared >= 24, `only ${compared} examples compared`);
  });

  test('each shared error example has the shape and code of a real error answer at its status', async () => {
    const real = await errorAnswers(doc);
    const problems: string[] = [];
    for (const [name, response] of Object.entries(doc.components.responses as Json)) {
      const status = Number(/(\d{3})$/.exec(name)?.[1]); // ErrorNNN, PaymentErrorNNN
      const media = (response as Json).content['application/json'];
      for (const example of Object.values(media.examples as Json)) {
        const answer = real.get(status);
        // 500, 502 and 503 come from faults (an unexpected error, an upstream failing or away) no request provokes.
        if (!answer) {
          if (![500, 502, 503].includes(status)) problems.push(`${name}: no real answer`);
          continue;
        }
        for (const d of differences(doc, media.schema, (example as Json).value, answer)) problems.push(`${name} ${d}`);
      }
    }
    assert.deepEqual(problems, []);
  });
});

/** A real answer at each error status a request can provoke, with the code the shared example shows. */
async function errorAnswers(doc: Json): Promise<Map<number, unknown>> {
  const h = await getHarness();
  const merchant = await newMerchant();
  const cred = merchant.cred;
  const answers = new Map<number, unknown>();
  const keep = (status: number, res: ApiResponse) => {
    assert.equal(res.status, status, res.text);
    const code = doc.components.responses[`Error${status}`].content['application/json'].examples;
    assert.ok(Object.keys(code).includes(res.body.error.code), `${status}: ${res.text}`);
    answers.set(status, res.body);
  };
  const account = `/v2/accounts/${merchant.accountId}`;
  keep(400, await call('/v2/accounts', { credential: cred, body: { externalUserId: '' } }));
  keep(401, await call('/v2/partners/config'));
  keep(403, await call(account, { credential: await newApp({ scopes: ['v2:payments'] }) }));
  keep(404, await call('/v2/accounts/acct_missing1', { credential: cred }));
  const headers = { 'idempotency-key': `errors-${process.pid}-conflict` };
  await call('/v2/accounts', { credential: cred, body: { externalUserId: `errors-${process.pid}-1` }, headers });
  keep(409, await call('/v2/accounts', { credential: cred, body: { externalUserId: `errors-${process.pid}-2` }, headers }));
  keep(
    413,
    await call('/v2/accounts', {
      credential: cred,
      body: { externalUserId: 'x', metadata: { pad: 'p'.repeat(h.config.http.maxBodyBytes) } },
    }),
  );
  keep(
    415,
    await call('/v2/accounts', {
      credential: cred,
      method: 'POST',
      rawBody: 'externalUserId=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    }),
  );
  keep(422, await createPayment(merchant, { assetCode: 'EURC' }));
  keep(424, await call(`${account}/deposit-addresses`, { credential: cred, body: { chainId: 79685 } }));
  const limited = await listenApi(await apiDepsOnHarness({ config: { ...h.config, rateLimit: { points: 1, windowSeconds: 60 } } }));
  try {
    await awayFromWindowEnd(60);
    await call('/v2/partners/config', { credential: cred, baseUrl: limited.baseUrl });
    keep(429, await call('/v2/partners/config', { credential: cred, baseUrl: limited.baseUrl }));
  } finally {
    await limited.close();
  }
  return answers;
}

/**
 * Sends every operation's documented request example, its example ids replaced by real ones, in an
 * order that gives each the state its example shows; `record` keeps each answer.
 */
async function tour(doc: Json, record: (operationId: string, res: ApiResponse) => void): Promise<void> {
  const h = await getHarness();
  const cred = await newApp();
  const ids: Record<string, string> = {};
  let keys = 0;
  const opOf = (operationId: string) => {
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      for (const [method, op] of Object.entries(item as Json))
        if ((op as Json).operationId === operationId) return { path, method: method.toUpperCase(), op: op as Json };
    }
    throw new Error(`no operation ${operationId}`);
  };
  /** Sends the operation's request example (ids substituted), expecting `status`. */
  const send = async (
    operationId: string,
    status: number,
    opts: {
      headers?: Record<string, string>;
      credential?: AppCredential | null;
      path?: Record<string, string>;
      ids?: Record<string, string>;
    } = {},
  ) => {
    const { path, method, op } = opOf(operationId);
    const example = op.requestBody?.content['application/json'].examples.default.value;
    const url = path.replace(/\{(\w+)\}/g, (_, name: string) => opts.path?.[name] ?? ids[`{${name}}`]!);
    const takesKey = ((op.parameters ?? []) as Json[]).some((p) => /IdempotencyKey/.test(p.$ref ?? '') || p.name === 'Idempotency-Key');
    // The key sent last, which getIdempotencyKey looks up ({key} in its path).
    if (takesKey) ids['{key}'] = `examples-${process.pid}-${(keys += 1)}-0123456789`;
    const res = await call(url, {
      method,
      ...(example === undefined ? {} : { body: substitute(example, { ...ids, ...opts.ids }) }),
      credential: opts.credential === undefined ? cred : opts.credential,
      headers: { ...(takesKey ? { 'idempotency-key': ids['{key}'] } : {}), ...opts.headers },
    });
    assert.equal(res.status, status, `${operationId}: ${res.text}`);
    record(operationId, res);
    return res;
  };

  // The merchant: the account of the examples (ACCOUNT_ID), as the account examples show it.
  const account = await send('createAccount', 201);
  ids['acct_7Q2mV9xKp3'] = ids['{accountId}'] = account.body.account.id;
  await send('updateDisplayProfile', 200);
  const wallet = await send('registerConnectedWallet', 201);
  ids.wallet_6Hq2Rt = wallet.body.connectedWallets[0].id;
  await send('setSettlementProfile', 200);
  await send('updatePaymentAcceptance', 200);
  const merchant: Merchant = { cred, accountId: account.body.account.id, wallet: wallet.body.connectedWallets[0].address };

  // A Payment to it, cancelled; deposit addresses.
  const payment = await send('createPayment', 201);
  ids['{paymentId}'] = payment.body.payment.id;
  // The create's key, looked up as a partner whose create timed out would: completed, with the Payment's id.
  const lookup = await send('getIdempotencyKey', 200);
  assert.equal(lookup.body.response.resourceId, payment.body.payment.id, lookup.text);
  await send('cancelPayment', 200);
  // The event log: its newest event is the cancellation (the examples' event).
  const log = await send('listEvents', 200);
  assert.equal(log.body.data[0].name, 'payment.cancelled', JSON.stringify(log.body.data[0]));
  ids['{eventId}'] = log.body.data[0].id;
  await send('getEvent', 200);
  await send('createDepositAddress', 201);
  await send('createDepositAddress', 200);

  // The public Payment routes: the configuration, and a Payment to the merchant's handle.
  ids['{appId}'] = cred.appId;
  ids.cornerbakery1 = account.body.paymentHandle.handle;
  await send('getPublicPaymentConfiguration', 200, { credential: null });
  await send('createPublicPayment', 201, { credential: null });

  // A linked bank account, verified once the provider says so (its signed callback is a hint: the
  // account is read from the provider), then disabled.
  const bank = await send('linkBankAccount', 201);
  ids.bank_account_7Yt2Kq = ids['{bankAccountId}'] = bank.body.bankAccount.id;
  await until(
    async () => ((await h.provider.adapter.getBankAccount(bank.body.bankAccount.id))?.status === 'verified' ? true : undefined),
    'the provider verifies the account',
  );
  await sendCallback(doc, ids, record);
  await until(
    async () =>
      (await h.db.prisma.bankAccount.findUnique({ where: { id: bank.body.bankAccount.id } }))?.status === 'verified' ? true : undefined,
    'the account verified',
  );
  await send('disableBankAccount', 200);

  // The payer (PAYER_ACCOUNT_ID): its vault, policy, approval and funds; then a Vault-funded Payment.
  const payer = await call('/v2/accounts', { credential: cred, body: { externalUserId: 'payer-77' } });
  ids.acct_3Lr8Tq1Nw6 = ids['{accountId}'] = payer.body.account.id;
  await send('createVault', 201);
  await send('putVaultPolicy', 200);
  const mails = h.mailbox.received.length;
  await send('sendVaultPolicyApproval', 201);
  ids['482913'] = h.mailbox.codeOf(await h.mailbox.next('payer@example.com', mails));
  // The approval's clock moved five minutes of its code's ten: the code still works.
  await send('advanceVaultApprovalClock', 200);
  const vault = await send('verifyVaultPolicyApproval', 200);
  await payTo(await newPayer(100_000_000n), vault.body.vault.address, 100_000_000n);
  const token = (await send('exchangeClientToken', 200)).body.accessToken as string;

  const funded = (await createPayment(merchant, { amount: '25.00' })).body;
  // A dry run of paying it from the vault: allowed, and nothing reserved (the authorize below still pays it).
  ids['{vaultId}'] = vault.body.vault.id;
  await send('evaluateVaultPolicy', 200, { ids: { payment_2Vt7Hc4Mz8: funded.payment.id } });
  // Its sandbox clock moved a minute of its fifteen: still open for the authorization below.
  await send('advancePaymentClock', 200, { path: { paymentId: funded.payment.id } });
  const bearer = { authorization: `Bearer ${token}`, 'x-svc-payment-secret': funded.checkout.clientSecret };
  const read = await call(`/v2/client/me/payments/${funded.payment.id}`, { headers: bearer });
  const option = (read.body.options as Json[]).find((o) => o.paymentMethodType === 'vault')!;
  ids.vault_action_7Qe2 = option.execution.actionId;
  await send('authorizeVaultOption', 200, {
    credential: null,
    headers: bearer,
    path: { paymentId: funded.payment.id, optionId: option.id },
  });

  // A wallet transfer the payer confirms.
  // Made from the createPayment request example too, so the answers carry its fields.
  const paymentBody = substitute(opOf('createPayment').op.requestBody.content['application/json'].examples.default.value, ids);
  const paid = (await createPayment(merchant, paymentBody)).body;
  const sender = await newPayer(25_000_000n);
  // The worker stopped from before the transfer: the scanner can't take it first (the Payment would no
  // longer ask for a transaction), and the answer is the Payment as the confirm found it.
  await withWorkerStopped(async () => {
    const transfer = await payTo(sender, paid.payment.funding.depositAddress.address, 25_000_000n);
    const paidRead = await call(`/v2/client/me/payments/${paid.payment.id}`, {
      headers: { authorization: `Bearer ${token}`, 'x-svc-payment-secret': paid.checkout.clientSecret },
    });
    ids.action_5Tz1 = paidRead.body.options[0].execution.actionId;
    ids[EXAMPLE_TX_HASH] = transfer as Hash;
    await send('confirmClientPayment', 200, {
      credential: null,
      headers: { authorization: `Bearer ${token}` },
      path: { paymentId: paid.payment.id },
    });
  });
  await send('revokeClientTokens', 200);

  // A refund of a succeeded Payment, and the recovery of an excess incident.
  await waitForPayment(merchant, paid.payment.id, 'succeeded', (p) => p.status === 'succeeded');
  ids['{accountId}'] = merchant.accountId;
  // Refunds are paid from the merchant's vault, under its policy.
  await fundedVault(merchant, 10);
  // Returned money goes back to its sender: the examples' destination is the payer of each.
  const refund = await send('createRefund', 201, { path: { paymentId: paid.payment.id }, ids: { [EXAMPLE.WALLET]: sender.address } });
  const excess = (await createPayment(merchant, { amount: '25.00' })).body;
  const twice = await newPayer(30_000_000n);
  await payTo(twice, excess.payment.funding.depositAddress.address, 25_000_000n);
  await payTo(twice, excess.payment.funding.depositAddress.address, 5_000_000n);
  await waitForPayment(
    merchant,
    excess.payment.id,
    'succeeded with an incident',
    (p) => p.status === 'succeeded' && p.incidentRecoverySummary.count === 1,
  );
  const incidents = await call(`/v2/payments/${excess.payment.id}/incidents`, { credential: cred });
  ids.incident_6Pq3 = incidents.body.items[0].id;
  const recovery = await send('createIncidentRecovery', 201, {
    path: { paymentId: excess.payment.id },
    ids: { [EXAMPLE.WALLET]: twice.address },
  });

  // Every transfer this started has finished before the next test file runs: money still moving
  // would keep the time-skipping server from skipping their timers.
  await waitForPayment(merchant, funded.payment.id, 'succeeded from the vault', (p) => p.status === 'succeeded');
  await returned(cred, paid.payment.id, 'refunds', refund.body.refund.id);
  await returned(cred, excess.payment.id, 'incident-recoveries', recovery.body.incidentRecovery.id);
}

async function returned(cred: AppCredential, paymentId: string, list: 'refunds' | 'incident-recoveries', id: string): Promise<void> {
  await eventually(async () => {
    const res = await call(`/v2/payments/${paymentId}/${list}`, { credential: cred });
    return (res.body.items as Json[]).find((r) => r.id === id)?.status === 'confirmed' ? true : undefined;
  }, `${id} confirmed`);
}

const EXAMPLE_TX_HASH = '0x3f1c2b4a5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708';

/** The provider's callback example, signed as the provider signs it. */
async function sendCallback(
  doc: Json,
  ids: Record<string, string>,
  record: (operationId: string, res: ApiResponse) => void,
): Promise<void> {
  const op = doc.paths['/v2/providers/{providerCode}/callbacks'].post;
  const body = JSON.stringify(substitute(op.requestBody.content['application/json'].examples.default.value, ids));
  const t = Math.floor(Date.now() / 1000);
  const res = await call('/v2/providers/sandbox/callbacks', {
    method: 'POST',
    rawBody: body,
    headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signCallback(TEST_OFFRAMP_CALLBACK_SECRET, body, t) },
  });
  assert.equal(res.status, 200, `receiveProviderCallback: ${res.text}`);
  record(op.operationId, res);
}
