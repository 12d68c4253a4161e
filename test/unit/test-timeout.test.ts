import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/** `npm test`'s command after its set-up: the shard runner. */
function npmTestArgs(): string[] {
  const script = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { test: string } }).scripts.test;
  const command = script
    .split('&&')
    .map((s) => s.trim())
    .at(-1);
  assert.equal(command, 'node --import tsx test/run.ts', `npm test ends with the shard runner: ${script}`);
  return command.split(/\s+/).slice(1);
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
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pp-test-timeout-'));
  try {
    const file = path.join(dir, 'hangs.test.ts');
    // A suite with a test that never ends and keeps working (a poll with no deadline): once cut, its
    // work goes on, and only the run's end stops it.
    writeFileSync(
      file,
      `import { describe, test } from 'node:test';
describe('a suite', () => {
  test('quick', () => undefined);
  test('hangs', () => new Promise(() => setInterval(() => undefined, 50)));
  test('after the hang', () => undefined);
});
`,
    );
    // Not as a child of this run's runner (NODE_TEST_CONTEXT would make it one): a runner of its own.
    const env: NodeJS.ProcessEnv = { ...process.env, TEST_TIMEOUT_MS: '1000', TEST_FILES: file };
    delete env.NODE_TEST_CONTEXT;
    delete env.RECORD_WORKFLOW_HISTORIES;
    const { code, output, ms } = await run(npmTestArgs(), env, 60_000);
    assert.equal(code, 1, output);
    assert.match(output, /✖ hangs \(\d+(\.\d+)?ms\)\n\s+'test timed out after 1000ms'/, output);
    assert.match(output, /✔ quick/, output);
    assert.match(output, /✔ after the hang/, output);
    assert.ok(ms < 30_000, `the run took ${ms} ms`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
