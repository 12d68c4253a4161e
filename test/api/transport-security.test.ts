import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiDepsOnHarness, getHarness } from '../support/harness';
import { listenApi } from '../support/bounded-api';
import { HSTS } from '../../src/http/middleware/transport-security';

/** The API behind a TLS-terminating proxy (PUBLIC_BASE_URL https) and as the sandbox runs it (http). */
async function answersOf(publicBaseUrl: string): Promise<Response[]> {
  const h = await getHarness();
  const api = await listenApi(await apiDepsOnHarness({ config: { ...h.config, http: { ...h.config.http, publicBaseUrl } } }));
  try {
    // An answer, a refusal and an HTML page: each carries the header or none does.
    return await Promise.all(['/healthz', '/v2/partners/config', '/checkout/payment_unknown'].map((p) => fetch(`${api.baseUrl}${p}`)));
  } finally {
    await api.close();
  }
}

test('behind an https public URL every answer carries Strict-Transport-Security, refusals and pages included', async () => {
  const answers = await answersOf('https://pay.example.com');
  assert.deepEqual(
    answers.map((r) => r.status),
    [200, 401, 404],
  );
  for (const r of answers) assert.equal(r.headers.get('strict-transport-security'), HSTS, r.url);
});

test('over plain http (the sandbox) no answer carries it: a browser would pin http hosts to https', async () => {
  for (const r of await answersOf('http://localhost:3000')) assert.equal(r.headers.get('strict-transport-security'), null, r.url);
});
