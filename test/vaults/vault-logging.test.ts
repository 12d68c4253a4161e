import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../../src/logger';
import { createApi } from '../../src/http/app';
import { call, newApp } from '../support/api-client';
import { apiDepsOnHarness, getHarness } from '../support/harness';
import { until } from '../support/until';
import { policyBody, uniqueEmail } from './support';
import { newAccount } from '../support/fixtures';

test('the approval code appears in no log line, from sending it to a wrong guess to the verification (debug level)', async () => {
  const h = await getHarness();
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      cb();
    },
  });
  const api = createApi(await apiDepsOnHarness({ logger: createLogger('debug', stream) }));
  const server = api.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const cred = await newApp();
    const accountId = await newAccount(cred);
    assert.equal((await call(`/v2/accounts/${accountId}/vault`, { credential: cred, body: {}, baseUrl })).status, 201);
    const email = uniqueEmail();
    await call(`/v2/accounts/${accountId}/vault/policy`, { method: 'PUT', credential: cred, body: policyBody(email), baseUrl });
    const before = h.mailbox.received.length;
    assert.equal((await call(`/v2/accounts/${accountId}/vault/policy/approval`, { credential: cred, body: {}, baseUrl })).status, 201);
    const code = h.mailbox.codeOf(await h.mailbox.next(email, before));
    const wrong = code === '000000' ? '000001' : '000000';
    assert.equal(
      (await call(`/v2/accounts/${accountId}/vault/policy/approval/verify`, { credential: cred, body: { code: wrong }, baseUrl })).status,
      422,
    );
    assert.equal(
      (await call(`/v2/accounts/${accountId}/vault/policy/approval/verify`, { credential: cred, body: { code }, baseUrl })).status,
      200,
    );
    await until((saw) => (saw(lines.length), lines.length >= 5), 'a log line for each of the five requests');
    const alone = (c: string) => new RegExp(`(^|[^0-9])${c}([^0-9]|$)`);
    for (const line of lines) {
      assert.ok(!alone(code).test(line), `a log line carries the code: ${line}`);
      assert.ok(!alone(wrong).test(line), `a log line carries the guess: ${line}`);
    }
    assert.ok(!lines.join('\n').includes(h.mailbox.url), 'the SMTP URL is not logged');
  } finally {
    server.close();
  }
});
