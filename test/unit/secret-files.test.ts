import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config';
import { SECRET_SETTINGS, resolveSecretFiles } from '../../src/config/secret-files';

const dir = mkdtempSync(path.join(os.tmpdir(), 'secret-files-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function secretFile(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text, { mode: 0o600 });
  return file;
}

describe('secrets from files (<NAME>_FILE)', () => {
  test('each secret setting is read from its file, trimmed, into the configuration', () => {
    const config = loadConfig({
      SERVICE_SECRET_FILE: secretFile('service', `${'s'.repeat(64)}\n`),
      SERVICE_SECRET_PREVIOUS_FILE: secretFile('previous', `${'p'.repeat(40)},${'q'.repeat(40)}\n`),
      METRICS_TOKEN_FILE: secretFile('admin', `  ${'a'.repeat(40)}  \n`),
      SMTP_URL_FILE: secretFile('smtp', 'smtp://user:pass@mail.internal:587\n'),
      OFFRAMP_CALLBACK_SECRET_FILE: secretFile('offramp', 'c'.repeat(40)),
      DATABASE_URL_FILE: secretFile('db', 'postgresql://pp:secret@db.internal:5432/pp\n'),
    });
    assert.equal(config.serviceSecret, 's'.repeat(64));
    assert.deepEqual(config.previousServiceSecrets, ['p'.repeat(40), 'q'.repeat(40)]);
    assert.equal(config.admin.metricsToken, 'a'.repeat(40));
    assert.equal(config.mail.smtpUrl, 'smtp://user:pass@mail.internal:587');
    assert.equal(config.offramp.callbackSecret, 'c'.repeat(40));
    assert.equal(config.database.url, 'postgresql://pp:secret@db.internal:5432/pp');
  });

  test('a value from a file is checked as the plain setting is', () => {
    assert.throws(
      () => loadConfig({ METRICS_TOKEN_FILE: secretFile('short', 'too-short\n') }),
      (err: unknown) => err instanceof ConfigError && /METRICS_TOKEN: /.test(err.message),
    );
  });

  test('both forms at once, a missing file and an empty one are refused, naming the setting and never the secret', () => {
    const both = secretFile('both', 'x'.repeat(40));
    assert.throws(
      () => loadConfig({ SERVICE_SECRET: 'y'.repeat(40), SERVICE_SECRET_FILE: both }),
      (err: unknown) =>
        err instanceof ConfigError &&
        /SERVICE_SECRET_FILE: set SERVICE_SECRET or SERVICE_SECRET_FILE, not both/.test(err.message) &&
        !err.message.includes('y'.repeat(40)),
    );
    const missing = path.join(dir, 'missing');
    assert.throws(
      () => loadConfig({ SMTP_URL_FILE: missing }),
      (err: unknown) => err instanceof ConfigError && err.message.includes(`SMTP_URL_FILE: cannot read ${missing} (ENOENT)`),
    );
    assert.throws(
      () => loadConfig({ OFFRAMP_CALLBACK_SECRET_FILE: secretFile('empty', ' \n') }),
      (err: unknown) => err instanceof ConfigError && /OFFRAMP_CALLBACK_SECRET_FILE: .* is empty/.test(err.message),
    );
  });

  test('every problem in one error, beside the other settings’ problems', () => {
    const { problems } = resolveSecretFiles(
      {
        METRICS_TOKEN_FILE: path.join(dir, 'nope'),
        SERVICE_SECRET: 'x'.repeat(40),
        SERVICE_SECRET_FILE: secretFile('taken', 'z'.repeat(40)),
      },
      () => {
        throw Object.assign(new Error('denied'), { code: 'EACCES' });
      },
    );
    assert.deepEqual(problems, [
      'SERVICE_SECRET_FILE: set SERVICE_SECRET or SERVICE_SECRET_FILE, not both',
      `METRICS_TOKEN_FILE: cannot read ${path.join(dir, 'nope')} (EACCES)`,
    ]);
    assert.throws(
      () => loadConfig({ METRICS_TOKEN_FILE: path.join(dir, 'nope'), PORT: 'x' }),
      (err: unknown) => err instanceof ConfigError && /METRICS_TOKEN_FILE: /.test(err.message) && /PORT: /.test(err.message),
    );
  });

  test('the _FILE names are not passed on, and an unset or blank one changes nothing', () => {
    const { env, problems } = resolveSecretFiles({ SMTP_URL_FILE: ' ', SMTP_URL: 'smtp://mail.internal', OTHER: 'kept' });
    assert.deepEqual(problems, []);
    assert.deepEqual(env, { SMTP_URL: 'smtp://mail.internal', OTHER: 'kept' });
  });

  test('the list holds every secret of the configuration', () => {
    assert.deepEqual([...SECRET_SETTINGS].sort(), [
      'API_DATABASE_URL',
      'DATABASE_URL',
      'METRICS_TOKEN',
      'OFFRAMP_CALLBACK_SECRET',
      'OPERATOR_OIDC_CLIENT_SECRET',
      'SERVICE_SECRET',
      'SERVICE_SECRET_PREVIOUS',
      'SMTP_URL',
      'WORKER_DATABASE_URL',
    ]);
  });
});
