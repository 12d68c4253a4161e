import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { until } from '../support/until';
import { exitWithin, npmStart, openPorts } from '../support/npm-start';

const ROOT = path.resolve(__dirname, '../..');
const DATA_DIR = path.join(ROOT, '.data', 'shutdown-test');

/**
 * A request still under way when the signal comes: its headers are in, its body arrives after the
 * signal. The console's sign-in reads the form, then counts the attempt and looks the email up in
 * PostgreSQL, so its answer proves the API drained before its dependencies stopped.
 */
async function requestUnderWay(adminUrl: string) {
  const form = await fetch(`${adminUrl}/console/login`);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1];
  assert.ok(csrf, 'the sign-in form carries its CSRF token');
  const cookie = form.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const body = new URLSearchParams({ _csrf: csrf, email: 'nobody@ops.example' }).toString();
  const req = http.request(`${adminUrl}/console/login`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) },
  });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.once('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.once('error', reject);
  });
  answer.catch(() => undefined);
  req.write(body.slice(0, 10));
  return {
    // Long enough for the server to have read the headers, so the connection counts as busy.
    headersIn: new Promise((r) => setTimeout(r, 1000)),
    finish: async () => {
      req.end(body.slice(10));
      return answer;
    },
  };
}

const afterReady = (output: string) => output.slice(output.indexOf('Press Ctrl-C to stop.'));

describe('stopping the service', () => {
  it(
    'Ctrl-C lets the in-flight request finish, drains the worker once, stops every embedded child and exits 0 without a stack trace',
    { timeout: 300_000 },
    async () => {
      const s = await npmStart(DATA_DIR);
      const underWay = await requestUnderWay(s.adminUrl);
      await underWay.headersIn;
      process.kill(-s.child.pid!, 'SIGINT');
      await until(() => /SIGINT: stopping/.test(afterReady(s.output())), 'the service to start stopping');
      const answer = await underWay
        .finish()
        .catch((err: unknown) => assert.fail(`no answer (${String(err)}); service said:\n${afterReady(s.output())}`));
      assert.equal(answer.status, 200, `the request under way when the signal came is answered: ${answer.body}`);
      assert.match(answer.body, /If nobody@ops\.example belongs to an operator/, 'after reading PostgreSQL, which was still up');

      const code = await exitWithin(s, 60_000);
      const tail = afterReady(s.output());
      assert.equal(code, 0, tail);
      assert.doesNotMatch(tail, /\n\s+at /, 'no stack trace');
      assert.doesNotMatch(tail, /Error|Not running/, 'no error, no second drain');
      assert.match(tail, /SIGINT: stopping[\s\S]*\nstopped\n/);
      assert.equal(tail.match(/state: 'DRAINING'/g)?.length, 1, 'the worker drains exactly once');
      assert.deepEqual(
        await openPorts(s.ports),
        [],
        'API, admin, PostgreSQL, Temporal, its UI, anvil and sandbox provider ports are all free',
      );
      assert.equal(existsSync(path.join(DATA_DIR, 'postgres', 'postmaster.pid')), false, 'the embedded PostgreSQL stopped');
    },
  );

  it('SIGTERM to npm, then a second one, forces the stop and still leaves no port open', { timeout: 300_000 }, async () => {
    const s = await npmStart(DATA_DIR);
    // A request that never finishes keeps the first stop waiting on the API's drain (10 s), so the
    // second signal comes while it is still under way.
    const stuck = await requestUnderWay(s.adminUrl);
    await stuck.headersIn;
    s.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1500)); // later than an echo of the first (lifecycle.ts)
    s.child.kill('SIGTERM');
    const code = await exitWithin(s, 60_000);
    const tail = afterReady(s.output());
    assert.notEqual(code, 0, 'a forced stop is not a clean one');
    assert.match(tail, /second SIGTERM: killing what is left/);
    assert.doesNotMatch(tail, /\n\s+at /, 'no stack trace');
    // A forced stop kills without waiting; the ports are free a moment later.
    await until(
      async (saw) => {
        const open = await openPorts(s.ports);
        saw(`open: ${open.join(', ')}`);
        return open.length === 0;
      },
      'every port free',
      10_000,
    );
    await until(() => !existsSync(path.join(DATA_DIR, 'postgres', 'postmaster.pid')), 'the embedded PostgreSQL stopped', 10_000);
  });
});
