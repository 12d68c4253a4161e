import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { call } from '../support/api-client';
import { runCli } from '../support/cli';
import { getHarness } from '../support/harness';
import { hashSecret } from '../../src/platform/secrets';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');

/** The real binary, as an operator starts it (the other CLI tests run commands in process: test/support/cli.ts). */
async function cli(args: string[]) {
  const h = await getHarness();
  return run(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: h.databaseUrl, LOG_LEVEL: 'silent' },
  });
}

test('apps create prints exactly one JSON object, stores only the hash, and the credential works', async () => {
  const h = await getHarness();
  const { stdout } = await cli(['apps', 'create', '--environment', 'sandbox', '--name', 'cli-app']);
  const lines = stdout.trim().split('\n');
  assert.equal(lines.length, 1, stdout);
  const created = JSON.parse(lines[0] ?? '') as { appId: string; appSecret: string; environment: string; scopes: string[] };
  assert.deepEqual(Object.keys(created).sort(), ['appId', 'appSecret', 'environment', 'scopes']);
  assert.match(created.appId, /^app_/);
  assert.equal(created.environment, 'sandbox');
  assert.deepEqual(created.scopes, ['v2:accounts', 'v2:deposit_addresses', 'v2:payments', 'v2:vaults']);

  const row = await h.db.prisma.app.findUniqueOrThrow({ where: { id: created.appId }, include: { secrets: true } });
  assert.deepEqual(
    row.secrets.map((s) => s.secretHash),
    [hashSecret(created.appSecret)],
  );
  assert.ok(!JSON.stringify(row).includes(created.appSecret));

  const res = await call('/v2/partners/config', { credential: created as never });
  assert.equal(res.status, 200);
  assert.equal(res.body.appId, created.appId);
});

test('apps create honours --scopes and refuses an unknown scope', async () => {
  const { stdout } = await runCli([
    'apps',
    'create',
    '--environment',
    'production',
    '--name',
    'scoped',
    '--scopes',
    'v2:accounts,v2:payments',
  ]);
  const created = JSON.parse(stdout) as { scopes: string[]; environment: string };
  assert.deepEqual(created.scopes, ['v2:accounts', 'v2:payments']);
  assert.equal(created.environment, 'production');
  await assert.rejects(
    runCli(['apps', 'create', '--environment', 'sandbox', '--name', 'bad', '--scopes', 'v2:everything']),
    (err: { code?: number; stdout?: string }) => {
      assert.equal(err.code, 1);
      assert.equal(err.stdout, '');
      return true;
    },
  );
});
