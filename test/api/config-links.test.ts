import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, newApp } from '../support/api-client';
import { OPENAPI_PATH } from '../../src/http/openapi/document';

/** Every link and endpoint GET /v2/partners/config hands a partner answers: none 404s, none is a placeholder. */
describe('the partner config links resolve', () => {
  test('links.docs, links.openapi, the public creation endpoints and the bank directory and the partner dashboard all answer', async () => {
    const cred = await newApp();
    const config = await call('/v2/partners/config', { credential: cred });
    assert.equal(config.status, 200, config.text);
    const { links, capabilities } = config.body;
    assert.equal(links.dashboard, '/dashboard');
    const dashboard = await call(links.dashboard);
    assert.equal(dashboard.status, 200, 'the dashboard opens at its sign-in page');
    assert.match(dashboard.text, /Email me a code/);
    assert.equal(config.body.integrations.partnerConsole.enabled, true);

    const docs = await call(links.docs);
    assert.equal(docs.status, 200);
    assert.match(docs.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(docs.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    // The reference lists every operation of the OpenAPI document, and links to it.
    const openapi = await call(links.openapi);
    assert.equal(links.openapi, OPENAPI_PATH);
    assert.equal(openapi.status, 200);
    const operations = Object.entries(openapi.body.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `<td><code>${method.toUpperCase()}</code></td><td><code>${path}</code></td>`),
    );
    assert.ok(operations.length > 40, `${operations.length} operations`);
    for (const op of operations) assert.ok(docs.text.includes(op), `the reference lists ${op}`);
    assert.ok(docs.text.includes(`href="${OPENAPI_PATH}"`));

    const publicCreation = capabilities.payments.publicPaymentCreation;
    const configure = await call(publicCreation.configureEndpoint);
    assert.equal(configure.status, 200, configure.text);
    assert.equal(configure.body.createEndpoint, publicCreation.createEndpoint);
    // The create endpoint exists: an empty POST is refused for its input, not a missing route.
    const create = await call(publicCreation.createEndpoint, {
      method: 'POST',
      body: {},
      headers: { 'idempotency-key': 'config-links-0001-check' },
    });
    assert.equal(create.status, 400, create.text);

    const directory = await call(`${capabilities.payments.methods.externalBank.directoryEndpoint}?country=US`, { credential: cred });
    assert.equal(directory.status, 200, directory.text);
  });
});
