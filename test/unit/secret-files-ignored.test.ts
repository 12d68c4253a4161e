import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
// Where the docs tell an operator to write the production seed (docs/operations.md).
const SEED = 'secrets/custody-seed.txt';

test('the production seed file the docs name is ignored by git', () => {
  // check-ignore exits 0 when the path is ignored, 1 when it is not.
  const ignored = execFileSync('git', ['check-ignore', '--no-index', '-v', SEED], { cwd: ROOT, encoding: 'utf8' });
  assert.match(ignored, /secrets/);
});

test('the secrets directory never goes into a Docker build context', () => {
  const lines = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim());
  assert.ok(lines.includes('secrets') || lines.includes('secrets/'), '.dockerignore lists secrets');
  assert.match(readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8'), new RegExp(SEED.replace('.', '\\.')));
});
