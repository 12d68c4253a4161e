import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/** `npm test`'s node arguments, with the entry file replaced. */
function npmTestArgs(entry: string): string[] {
  const script = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { test: string } }).scripts.test;
  const command = script
    .split('&&')
    .map((s) => s.trim())
    .find((s) => s.startsWith('node --import tsx --test'));
  assert.ok(command, `npm test runs node --test: ${script}`);
  const args = command.split(/\s+/).slice(1);
  assert.equal(args.at(-1), 'test/index.ts');
  return [...args.slice(0, -1), entry];
}

function run(args: string[], env: NodeJS.ProcessEnv, killAfterMs: number): Promise<{ code: number | null; output: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
    // Its whole process group: node --test runs the file in a child of its own.
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), killAfterMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output, ms: Date.now() - started });
    });
  });
}

test('npm test cuts a hung test at its timeout, names it, runs the rest, and ends', async () => {
  assert.match(readFileSync(path.join(ROOT, 'package.json'), 'utf8'), /node --import tsx --test --test-timeout=\d+ --test-force-exit /);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pp-test-timeout-'));
  try {
    const entry = path.join(dir, 'index.ts');
    // As test/index.ts does, then a suite with a test that never ends and keeps working (a poll with
    // no deadline): once cut, its work goes on, and only the run's end stops it.
    writeFileSync(
      entry,
      `import { describe, test } from 'node:test';
import { installDefaultTimeouts } from ${JSON.stringify(path.join(ROOT, 'test/support/test-timeouts'))};
installDefaultTimeouts();
describe('a suite', () => {
  test('quick', () => undefined);
  test('hangs', () => new Promise(() => setInterval(() => undefined, 50)));
  test('after the hang', () => undefined);
});
`,
    );
    // Not as a child of this run's runner (NODE_TEST_CONTEXT would make it one): a runner of its own.
    const env: NodeJS.ProcessEnv = { ...process.env, TEST_TIMEOUT_MS: '1000' };
    delete env.NODE_TEST_CONTEXT;
    const { code, output, ms } = await run(npmTestArgs(entry), env, 60_000);
    assert.equal(code, 1, output);
    assert.match(output, /✖ hangs \(\d+(\.\d+)?ms\)\n\s+'test timed out after 1000ms'/, output);
    assert.match(output, /✔ quick/, output);
    assert.match(output, /✔ after the hang/, output);
    assert.ok(ms < 30_000, `the run took ${ms} ms`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
