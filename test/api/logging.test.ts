import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../../src/logger';
import { createApi } from '../../src/http/app';
import { basicAuth, newApp } from '../support/api-client';
import { apiDepsOnHarness } from '../support/harness';
import { until } from '../support/until';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      cb();
    },
  });
  return { lines, stream };
}

test('the logger redacts secrets wherever a caller puts them', () => {
  const { lines, stream } = capture();
  const logger = createLogger('info', stream);
  logger.info(
    {
      appSecret: 'sk_test_topsecret1',
      checkout: { clientSecret: 'cs_topsecret2' },
      endpoint: { signingSecret: 'whsec_topsecret3' },
      headers: { authorization: 'Basic dG9wc2VjcmV0NA==' },
    },
    'something happened',
  );
  const out = lines.join('\n');
  for (const secret of ['topsecret1', 'topsecret2', 'topsecret3', 'dG9wc2VjcmV0NA']) assert.ok(!out.includes(secret), out);
  assert.match(out, /\[Redacted\]/);
});

test('request logs are structured JSON with a request id and never carry the credential', async () => {
  const { lines, stream } = capture();
  const api = createApi(
    await apiDepsOnHarness({
      logger: createLogger('info', stream),
    }),
  );
  const server = api.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const cred = await newApp();
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/v2/partners/config`, {
      headers: { authorization: basicAuth(cred.appId, cred.appSecret), 'x-request-id': 'req-log-test-1' },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-request-id'), 'req-log-test-1');
    // The request's line is written as it ends, not necessarily before the answer arrives.
    const entry = await until(
      () => lines.map((l) => JSON.parse(l) as Record<string, any>).find((e) => e.requestId === 'req-log-test-1'),
      "the request's log line",
    );
    assert.equal(entry.status, 200);
    assert.equal(entry.appId, cred.appId);
    assert.equal(entry.req.headers.authorization, '[Redacted]');
    const all = lines.join('\n');
    assert.ok(!all.includes(cred.appSecret));
    assert.ok(!all.includes(Buffer.from(`${cred.appId}:${cred.appSecret}`).toString('base64')));
  } finally {
    server.close();
  }
});
