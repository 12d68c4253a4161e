import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { freePort, isPortOpen } from '../../src/embedded/process';
import { until } from '../support/until';

const ROOT = path.resolve(__dirname, '../..');
const DATA_DIR = path.join(ROOT, '.data', 'shutdown-test');
const PORT_VARS = [
  'EMBEDDED_POSTGRES_PORT',
  'EMBEDDED_TEMPORAL_PORT',
  'TEMPORAL_UI_PORT',
  'EMBEDDED_ANVIL_PORT',
  'SANDBOX_PROVIDER_PORT',
  'PORT',
  'ADMIN_PORT',
] as const;

interface Started {
  child: ReturnType<typeof spawn>;
  ports: number[];
  apiUrl: string;
  adminUrl: string;
  output: () => string;
  exit: Promise<number | null>;
}

/**
 * `npm start` as a user runs it, on its own stack (free ports, data in .data/shutdown-test), in its
 * own process group: signalling the group is what Ctrl-C in a terminal does.
 */
async function startService(): Promise<Started> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR, LOG_LEVEL: 'warn' };
  for (const name of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'PGPORT_LOCAL']) delete env[name];
  const ports: number[] = [];
  for (const name of PORT_VARS) {
    const port = await freePort();
    env[name] = String(port);
    ports.push(port);
  }
  const child = spawn('npm', ['start'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 180_000;
  while (!output.includes('Press Ctrl-C to stop.')) {
    if (child.exitCode !== null) throw new Error(`npm start exited (${child.exitCode}) before it was ready:\n${output}`);
    if (Date.now() > deadline) {
      process.kill(-child.pid!, 'SIGKILL');
      throw new Error(`npm start not ready after 180 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    child,
    ports,
    apiUrl: `http://127.0.0.1:${env.PORT}`,
    adminUrl: `http://127.0.0.1:${env.ADMIN_PORT}`,
    output: () => output,
    exit,
  };
}

async function exitWithin(started: Started, ms: number): Promise<number | null> {
  const timer = setTimeout(() => process.kill(-started.child.pid!, 'SIGKILL'), ms);
  try {
    return await started.exit;
  } finally {
    clearTimeout(timer);
  }
}

async function openPorts(ports: number[]): Promise<number[]> {
  const open: number[] = [];
  for (const port of ports) if (await isPortOpen(port)) open.push(port);
  return open;
}

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
      const s = await startService();
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
    const s = await startService();
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
