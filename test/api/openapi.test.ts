import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type Koa from 'koa';
import { createApi } from '../../src/http/app';
import { OPENAPI_PATH, partnersOpenApi, type OpenApiDocument } from '../../src/http/openapi/document';
import { apiDepsOnHarness, getHarness } from '../support/harness';
import { call, harnessOpenApi, newApp, responseChecker } from '../support/api-client';
import { createResponseChecker } from '../support/openapi-check';
import { listRoutes } from './fuzz/routes';
import { newMerchant } from '../support/fixtures';
import { BANK_DIRECTORY } from '../../src/domain/bank-accounts/bank-directory';

type Json = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

async function served(): Promise<OpenApiDocument> {
  return harnessOpenApi();
}

async function validateOpenApi(doc: unknown): Promise<{ valid: boolean; errors?: unknown }> {
  const { Validator } = await import('@seriousme/openapi-schema-validator');
  return new Validator().validate(doc as Json);
}

function operations(doc: OpenApiDocument): Array<{ method: string; path: string; op: Json }> {
  return Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item as Json)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ method, path, op: op as Json })),
  );
}

/** Every method + path the app's routers serve under /v2, in the document's {param} form. */
function v2RoutesOf(app: Koa): Set<string> {
  return new Set(
    listRoutes(app)
      .filter((r) => r.split(' ')[1]!.startsWith('/v2/'))
      .map((r) => r.replace(/:(\w+)/g, '{$1}')),
  );
}

describe('OpenAPI document at /v2/openapi/partners.json', () => {
  test('is a valid OpenAPI 3.1 document, and the validator rejects a broken copy', async () => {
    const doc = await served();
    assert.equal(doc.openapi, '3.1.0');
    const result = await validateOpenApi(doc);
    assert.deepEqual(result.errors, undefined);
    assert.equal(result.valid, true);

    const broken = structuredClone(doc) as Json;
    delete broken.paths['/v2/payments'].post.responses; // an operation without responses is not OpenAPI
    broken.info = { title: 42 };
    assert.equal((await validateOpenApi(broken)).valid, false);
  });

  test('documents every /v2 route the app serves, and nothing it does not serve', async () => {
    const h = await getHarness();
    // Every optional module on: the app as `npm start` runs it.
    const app = createApi(
      await apiDepsOnHarness({ engine: h.engine, client: { engine: h.engine }, returns: h.engine, chains: h.chain.chains }),
    );
    const inApp = v2RoutesOf(app as unknown as Koa);
    const inDoc = new Set(operations(await served()).map(({ method, path }) => `${method.toUpperCase()} ${path}`));
    assert.ok(inApp.size >= 40, `only ${inApp.size} routes found on the routers`);
    assert.deepEqual(
      [...inApp].filter((r) => !inDoc.has(r)).sort(),
      [],
      'routes missing from the document (add them to src/http/openapi/<route file>.ts)',
    );
    assert.deepEqual([...inDoc].filter((r) => !inApp.has(r)).sort(), [], 'documented operations the app does not serve');
  });

  test('every operation has security, an error envelope per error status and Svc-Version on every answer; write routes carry examples', async () => {
    const doc = await served();
    for (const { method, path, op } of operations(doc)) {
      const name = `${method.toUpperCase()} ${path}`;
      assert.ok(Array.isArray(op.security), `${name}: no security`);
      const statuses = Object.keys(op.responses);
      assert.ok(
        statuses.some((s) => s.startsWith('2')),
        `${name}: no success answer`,
      );
      for (const [status, response] of Object.entries(op.responses as Json)) {
        const r = response.$ref ? (doc.components as Json).responses[response.$ref.split('/').pop()] : response;
        assert.ok(r.headers?.['Svc-Version'], `${name} ${status}: no Svc-Version header`);
        if (status.startsWith('4') || status.startsWith('5')) {
          // Shared per status; at 502 and 503 per family of upstream codes (PaymentErrorNNN on the Payment paths).
          assert.match(response.$ref ?? '', new RegExp(`/(Payment)?Error${status}$`), `${name} ${status}: not the shared error response`);
        }
      }
      if (['post', 'put', 'patch'].includes(method)) {
        assert.ok(op.requestBody?.content['application/json'].examples?.default, `${name}: no request example`);
        const success = statuses.filter((s) => s.startsWith('2')).map((s) => op.responses[s]);
        assert.ok(
          success.some((r: Json) => r.content['application/json'].examples?.default),
          `${name}: no success example`,
        );
      }
    }
    assert.deepEqual(doc.paths?.['/v2/payments']?.post?.security, [{ appCredentials: [] }]);
    assert.deepEqual(doc.paths?.['/v2/client/me/payments/{paymentId}/options/{optionId}/authorize']?.post?.security, [
      { clientToken: [], paymentSecret: [] },
    ]);
    assert.deepEqual(doc.paths?.[OPENAPI_PATH]?.get?.security, []);
    const errors = (doc.components as Json).responses;
    const header = (ref: Json) => (doc.components as Json).headers[ref.$ref.split('/').pop()];
    assert.ok(header(errors.Error429.headers['Retry-After']).required);
    assert.ok(header(errors.Error503.headers['Retry-After']).required);
    assert.deepEqual(errors.Error424.content['application/json'].schema.properties.error.properties.code.enum, ['chain_config_missing']);
  });

  test('every example validates against the schema it illustrates', async () => {
    const doc = await served();
    const checker = createResponseChecker(doc);
    let checked = 0;
    const media = (content: Json | undefined) => Object.values(content ?? {}) as Json[];
    for (const { method, path, op } of operations(doc)) {
      const responses = Object.entries(op.responses as Json).map(
        ([status, r]) => [status, r.$ref ? (doc.components as Json).responses[r.$ref.split('/').pop()] : r] as const,
      );
      const parts = [['request', op.requestBody?.content] as const, ...responses.map(([status, r]) => [status, r.content] as const)];
      for (const [where, content] of parts) {
        for (const m of media(content)) {
          for (const [exampleName, example] of Object.entries((m.examples ?? {}) as Json)) {
            const validate = checker.validator(m.schema);
            assert.ok(
              validate(example.value),
              `${method.toUpperCase()} ${path} ${where} example ${exampleName}: ${JSON.stringify(validate.errors)}`,
            );
            checked += 1;
          }
        }
      }
    }
    assert.ok(checked >= 40, `only ${checked} examples`);
  });

  test("Svc-Version, sent or answered, is documented as an enum of the environments' supported versions", async () => {
    const h = await getHarness();
    const doc = (await served()) as Json;
    const components = doc.components as Json;
    assert.deepEqual(components.parameters.SvcVersion.schema.enum, h.environments.supportedApiVersions);
    assert.equal(components.parameters.SvcVersion.in, 'header');
    assert.notEqual(components.parameters.SvcVersion.required, true);
    assert.deepEqual(components.headers.SvcVersion.schema.enum, h.environments.supportedApiVersions);
    for (const { method, path, op } of operations(doc as OpenApiDocument)) {
      // The credentialed routes and the public Payment routes (their app is in the path) enforce it.
      const guarded = (op.security as Json[]).some((s) => 'appCredentials' in s || 'clientToken' in s) || path.startsWith('/v2/public/');
      const refs = ((op.parameters ?? []) as Json[]).filter(
        (p) => p.$ref === '#/components/parameters/SvcVersion' || p.name === 'Svc-Version',
      );
      assert.equal(refs.length, guarded ? 1 : 0, `${method.toUpperCase()} ${path}: Svc-Version parameter`);
      if (refs[0]) assert.equal(refs[0].$ref, '#/components/parameters/SvcVersion', `${method.toUpperCase()} ${path}: the shared enum`);
    }
    // Read from the environments, not written down twice: a second supported version joins the enum.
    const two = partnersOpenApi({
      apiVersion: '2026-09-09',
      supportedApiVersions: ['2026-09-09', '2027-03-01'],
      publicBaseUrl: 'http://other.example',
    }) as Json;
    assert.deepEqual(two.components.parameters.SvcVersion.schema.enum, ['2026-09-09', '2027-03-01']);
  });

  test('every list documents its cursor as the nextCursor format, which a real nextCursor matches and another value does not pass', async () => {
    const doc = await served();
    const cursors = operations(doc).flatMap(({ method, path, op }) =>
      ((op.parameters ?? []) as Json[])
        .filter((p) => p.name === 'cursor')
        .map((p) => ({ name: `${method.toUpperCase()} ${path}`, schema: p.schema as Json })),
    );
    assert.ok(cursors.length >= 6, `only ${cursors.length} cursor parameters`);
    const patterns = new Set(cursors.map((c) => c.schema.pattern));
    assert.equal(patterns.size, 1, `one cursor format: ${[...patterns].join(' | ')}`);
    assert.ok([...patterns][0], 'the cursor format is documented');
    const pattern = new RegExp([...patterns][0]);
    const merchant = await newMerchant();
    const cred = merchant.cred;
    const m = { id: merchant.accountId };
    // Two deposit addresses: a first page of one has a next one.
    for (let i = 0; i < 2; i++) {
      const created = await call(`/v2/accounts/${m.id}/deposit-addresses`, {
        credential: cred,
        body: { chainId: 31337, newAddress: true },
      });
      assert.equal(created.status, 201, created.text);
    }
    const first = await call(`/v2/accounts/${m.id}/deposit-addresses?limit=1`, { credential: cred });
    assert.match(first.body.nextCursor, pattern, first.text);
    const off = await call(`/v2/accounts/${m.id}/deposit-addresses?cursor=0`, { credential: cred });
    assert.equal(off.status, 400);
    assert.equal(off.body.error.details.fields[0].field, 'query.cursor');
  });

  test('every EVM address a request carries is documented with its pattern', async () => {
    const doc = (await served()) as Json;
    const deref = (x: Json): Json => (x?.$ref ? doc.components.schemas[x.$ref.split('/').pop()] : x);
    const found: string[] = [];
    const walk = (schema: Json, at: string) => {
      const x = deref(schema);
      if (!x || typeof x !== 'object') return;
      for (const [name, child] of Object.entries((x.properties ?? {}) as Json)) {
        if (/^(address|destinationAddress|tokenAddress)$/.test(name)) {
          found.push(at + name);
          assert.equal(deref(child).pattern, '^0x[0-9a-fA-F]{40}$', `${at}${name}`);
        }
        walk(child, `${at}${name}.`);
      }
      if (x.items) walk(x.items, `${at}0.`);
      for (const key of ['oneOf', 'anyOf', 'allOf']) for (const child of x[key] ?? []) walk(child, at);
    };
    for (const { method, path, op } of operations(doc as OpenApiDocument)) {
      const body = op.requestBody?.content['application/json'].schema;
      if (body) walk(body, `${method.toUpperCase()} ${path} body.`);
    }
    assert.ok(found.length >= 4, found.join(', '));
  });

  test("a bank account link's bankCode is documented as one of its country's directory, which the link enforces", async () => {
    const doc = (await served()) as Json;
    const branches = doc.paths['/v2/accounts/{accountId}/bank-accounts'].post.requestBody.content['application/json'].schema
      .oneOf as Json[];
    assert.ok(branches.length >= 3);
    for (const branch of branches) {
      const country = branch.properties.country.const as keyof typeof BANK_DIRECTORY;
      assert.deepEqual(
        branch.properties.bankCode.enum,
        BANK_DIRECTORY[country].banks.map((b) => b.bankCode),
        country,
      );
    }
  });

  test('a Payment creation documents intent as choosing its shape: a send has a source account and may pay a bank account, a receive has neither', async () => {
    const doc = (await served()) as Json;
    const body = doc.paths['/v2/payments'].post.requestBody.content['application/json'].schema as Json;
    const branches = (body.oneOf ?? body.anyOf ?? []) as Json[];
    const byIntent = new Map(branches.map((b) => [b.properties?.intent?.const, b]));
    assert.deepEqual([...byIntent.keys()].sort(), ['receive', 'send']);
    const receive = byIntent.get('receive')!;
    const send = byIntent.get('send')!;
    assert.equal(receive.properties.sourceAccountId, undefined);
    assert.equal(receive.additionalProperties, false);
    assert.ok(send.required.includes('sourceAccountId'));
    const destinationTypes = (b: Json) =>
      ((b.properties.destination.oneOf ?? [b.properties.destination]) as Json[]).map((d) => d.properties.type.const).sort();
    assert.deepEqual(destinationTypes(receive), ['upa']);
    assert.deepEqual(destinationTypes(send), ['bank_account', 'upa']);
    // The service enforces what the document says.
    const m = await newMerchant();
    const base = { amount: '5', assetCode: 'USDC', chainId: 31337 };
    const key = (k: string) => ({ 'idempotency-key': `intent-shape-${process.pid}-${k}` });
    const noSource = await call('/v2/payments', {
      credential: m.cred,
      headers: key('a'),
      body: { ...base, intent: 'send', destination: { type: 'upa', accountId: m.accountId } },
    });
    assert.equal(noSource.status, 400);
    assert.equal(noSource.body.error.details.fields[0].field, 'body.sourceAccountId');
    const receiveToBank = await call('/v2/payments', {
      credential: m.cred,
      headers: key('b'),
      body: { ...base, intent: 'receive', destination: { type: 'bank_account', bankAccountId: 'bank_account_x1' } },
    });
    assert.equal(receiveToBank.status, 400);
  });

  test('the response checker fails a wrong body, an undocumented status and a missing header; it leaves undocumented paths alone', async () => {
    const checker = await responseChecker();
    const headers = new Headers({ 'Svc-Version': '2026-09-09', 'X-Request-Id': 'req_1' });
    const answer = (status: number, body: unknown, path = '/v2/payments/payment_abc', h = headers) => ({
      method: 'GET',
      path,
      status,
      headers: h,
      body,
      text: JSON.stringify(body),
    });
    assert.throws(
      () => checker.check(answer(200, { payment: { id: 'payment_abc' }, nextAction: null })),
      /getPayment \(GET \/v2\/payments\/\{paymentId\}\) answered 200 with a body its document does not allow/,
    );
    assert.throws(
      () => checker.check(answer(418, { error: { code: 'teapot', message: 'no' } })),
      /answered 418, a status its document does not list/,
    );
    assert.throws(
      () =>
        checker.check(
          answer(404, { error: { code: 'not_found', message: 'Payment not found' } }, undefined, new Headers({ 'X-Request-Id': 'r' })),
        ),
      /without its required header Svc-Version/,
    );
    assert.throws(
      () => checker.check(answer(404, { error: { code: 'payment_not_open', message: 'x' } })),
      /error\/code must be equal to one of the allowed values/,
    );
    checker.check(answer(404, { error: { code: 'not_found', message: 'Payment not found' } }));
    checker.check(answer(404, { whatever: true }, '/v2/no-such-thing'));
    checker.check({ ...answer(405, { whatever: true }), method: 'DELETE' });
    assert.equal(checker.operationFor('GET', '/v2/accounts/external/user-1?x=1')?.template, '/v2/accounts/external/{externalUserId}');
    assert.equal(checker.operationFor('GET', '/v2/accounts/acct_1')?.template, '/v2/accounts/{accountId}');
  });

  test('the config link resolves: links.openapi answers 200 with the document, without credentials', async () => {
    const cred = await newApp();
    const config = await call('/v2/partners/config', { credential: cred });
    assert.equal(config.status, 200);
    assert.equal(config.body.links.openapi, OPENAPI_PATH);
    const res = await call(config.body.links.openapi);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(res.headers.get('svc-version'), '2026-09-09');
    assert.deepEqual(res.body, JSON.parse(JSON.stringify(await served())));
  });
});
