import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { call } from '../support/api-client';
import { eventually } from '../support/chain';
import { OpenApiViolation } from '../support/openapi-check';
import { ServerErrorAnswer, until, WaitFailed } from '../support/until';

/** Far beyond what any of these reads takes: a wait that reaches it did not fail at once. */
const DEADLINE_MS = 30_000;
const AT_ONCE_MS = 3_000;

async function failsAtOnce(wait: Promise<unknown>, cause: new (...args: never[]) => Error): Promise<WaitFailed> {
  const started = Date.now();
  const err = await wait.then(
    () => assert.fail('the wait answered'),
    (e: unknown) => e,
  );
  const elapsed = Date.now() - started;
  assert.ok(err instanceof WaitFailed, `a WaitFailed, not ${String(err)}`);
  assert.ok(err.cause instanceof cause, `caused by a ${cause.name}: ${String(err.cause)}`);
  assert.ok(elapsed < AT_ONCE_MS, `failed after ${elapsed} ms, not at once`);
  return err;
}

describe('Polling helpers fail at once on a wrong answer, and keep polling through "not yet"', () => {
  // A service that answers every request 500, as a broken endpoint would.
  let broken: http.Server;
  let baseUrl = '';
  let requests = 0;
  before(async () => {
    broken = http.createServer((_req, res) => {
      requests += 1;
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'internal_error', message: 'An unexpected error occurred' } }));
    });
    await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(broken.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => broken.close(() => resolve())));

  test('a 5xx answer to a call() made while polling fails eventually() at once, naming what it waited for and the answer', async () => {
    requests = 0;
    const wait = eventually(
      async () => (await call('/v2/payments/payment_x', { baseUrl })).body?.payment?.status === 'succeeded',
      'payment_x to succeed',
      {
        mine: false,
        timeoutMs: DEADLINE_MS,
      },
    );
    const err = await failsAtOnce(wait, ServerErrorAnswer);
    assert.equal(requests, 1, 'one read, no retry of a fault');
    assert.match(err.message, /payment_x to succeed/);
    assert.match(err.message, /GET \/v2\/payments\/payment_x .*answered 500/);
  });

  test('so does until(), and an OpenAPI violation (an AssertionError of the response checker)', async () => {
    await failsAtOnce(
      until(async () => (await call('/v2/accounts', { baseUrl })).status === 200, 'the accounts', DEADLINE_MS),
      ServerErrorAnswer,
    );
    const violation = () => {
      throw new OpenApiViolation('OpenAPI: getPayment (GET /v2/payments/{paymentId}) answered 200 with a body its document does not allow');
    };
    await failsAtOnce(until(violation, 'a valid Payment', DEADLINE_MS), OpenApiViolation);
    await failsAtOnce(eventually(violation, 'a valid Payment', { mine: false, timeoutMs: DEADLINE_MS }), OpenApiViolation);
  });

  test('what is only "not yet" is retried: a thrown read, then a value', async () => {
    let reads = 0;
    const value = await until(
      () => {
        reads += 1;
        if (reads < 3) throw new Error('row not written yet');
        return 'written';
      },
      'the row',
      DEADLINE_MS,
    );
    assert.deepEqual([value, reads], ['written', 3]);
  });

  test('at its deadline a wait says what it waited for and the last thing it saw', async () => {
    let reads = 0;
    const err = await until(
      (saw) => {
        reads += 1;
        saw({ status: 'processing', read: reads });
        return undefined;
      },
      'the Payment to succeed',
      300,
    ).catch((e: unknown) => e);
    assert.ok(err instanceof WaitFailed);
    assert.match(
      err.message,
      /^timed out after 300 ms \(\d+ reads\) waiting for the Payment to succeed; last seen: \{"status":"processing","read":\d+\}$/,
    );
    const failing = await until(() => Promise.reject(new Error('connection refused')), 'the API', 200).catch((e: unknown) => e);
    assert.match((failing as Error).message, /waiting for the API; nothing read; last error: Error: connection refused$/);
  });
});
