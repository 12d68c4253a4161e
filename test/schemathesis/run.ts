import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startStack, type Stack } from './stack';
import { createFixtures, type Fixtures } from './fixtures';
import { cacheDir } from '../../src/embedded/paths';
import toolchain from '../../config/toolchain.json';

/**
 * `npm run fuzz:schemathesis`: Schemathesis (--checks all) against `npm start` and its OpenAPI
 * document. Starts the service on free ports with its data in .data/schemathesis, creates an app
 * credential (the CLI) and fixtures (an account, a Payment, a deposit address, a bank account, a
 * client token) so path ids are real, runs the fuzzer with a fixed seed, and fails on any failure
 * not in accepted-failures.json (each entry with its reason). The service stops at the end, whatever
 * happens.
 *
 *   --examples <n>   test cases per operation and phase (default 25: CI's run)
 *   --seed <n>       default 1
 *   --long           100 examples: the longer run of docs/testing.md
 *   --record         add this run's new failures to accepted-failures.json (each then needs a reason
 *                    written by hand before any run passes again)
 */
const ROOT = path.resolve(__dirname, '../..');
const HERE = __dirname;
const BASELINE = path.join(HERE, 'accepted-failures.json');
const DATA_DIR = path.join(ROOT, '.data', 'schemathesis');

function options() {
  const { values } = parseArgs({
    options: { examples: { type: 'string' }, seed: { type: 'string' }, long: { type: 'boolean' }, record: { type: 'boolean' } },
  });
  return {
    record: values.record ?? false,
    examples: Number(values.examples ?? (values.long ? 100 : 25)),
    seed: Number(values.seed ?? 1),
    // Every phase, the stateful one (links between operations) included, in CI too.
    phases: 'examples,coverage,fuzzing,stateful',
  };
}

/** Every accepted failure says why: an entry without a reason fails the run before it starts. */
function checkBaseline(): number {
  if (!existsSync(BASELINE))
    throw new Error(`${path.relative(ROOT, BASELINE)} is missing (Schemathesis would write one of every failure it meets)`);
  const { entries } = JSON.parse(readFileSync(BASELINE, 'utf8')) as {
    entries: Array<{ operation: string; check: string; reason?: string }>;
  };
  const unexplained = entries.filter((e) => typeof e.reason !== 'string' || e.reason.trim().length < 20);
  if (unexplained.length)
    throw new Error(`accepted failures without a reason: ${unexplained.map((e) => `${e.operation} ${e.check}`).join('; ')}`);
  return entries.length;
}

function fixtureEnv(f: Fixtures): NodeJS.ProcessEnv {
  return {
    ST_APP_ID: f.appId,
    ST_APP_SECRET: f.appSecret,
    ST_CLIENT_TOKEN: f.clientToken,
    ST_PAYMENT_SECRET: f.paymentSecret,
    ST_ACCOUNT_ID: f.accountId,
    ST_EXTERNAL_USER_ID: f.externalUserId,
    ST_PAYMENT_ID: f.paymentId,
    ST_OPTION_ID: f.optionId,
    ST_DEPOSIT_ADDRESS_ID: f.depositAddressId,
    ST_BANK_ACCOUNT_ID: f.bankAccountId,
    ST_VAULT_ID: f.vaultId,
    ST_VAULT_ACCOUNT_ID: f.vaultAccountId,
    ST_CLOCK_PAYMENT_ID: f.clockPaymentId,
  };
}

function runSchemathesis(stack: Stack, f: Fixtures, opts: ReturnType<typeof options>): Promise<number> {
  const bin = path.join(cacheDir(), `schemathesis-${toolchain.schemathesis.version}`, 'bin', 'schemathesis');
  const reports = path.join(DATA_DIR, 'reports');
  mkdirSync(reports, { recursive: true });
  const args = [
    '--config-file',
    path.join(HERE, 'schemathesis.toml'),
    'run',
    `${stack.apiUrl}/v2/openapi/partners.json`,
    '--url',
    stack.apiUrl,
    '--checks',
    'all',
    '--seed',
    String(opts.seed),
    '--max-examples',
    String(opts.examples),
    '--phases',
    opts.phases,
    '--generation-deterministic',
    '--baseline',
    BASELINE,
    ...(opts.record ? ['--baseline-update'] : []),
    // One worker: with two, Hypothesis' lambda-description cache raced (an internal error, not the API's).
    '--workers',
    '1',
    '--no-color',
    '--report',
    'junit,json',
    '--report-dir',
    reports,
  ];
  process.stdout.write(`schemathesis ${args.join(' ')}\n`);
  const child = spawn(bin, args, { cwd: DATA_DIR, env: { ...process.env, ...fixtureEnv(f) }, stdio: 'inherit' });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1))));
}

async function main(): Promise<number> {
  const opts = options();
  const accepted = opts.record ? 0 : checkBaseline();
  const log = (line: string) => process.stdout.write(`${line}\n`);
  log(
    `fuzz:schemathesis: seed ${opts.seed}, ${opts.examples} examples per operation, phases ${opts.phases}, ${accepted} accepted failures`,
  );
  const stack = await startStack({ dataDir: DATA_DIR, readyWithinMs: 300_000, log });
  // Ctrl-C or a CI timeout: the service stops before this process does.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => void stack.stop().finally(() => process.exit(130)));
  }
  try {
    const fixtures = await createFixtures(stack.apiUrl, stack.env);
    return await runSchemathesis(stack, fixtures, opts);
  } finally {
    await stack.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`fuzz:schemathesis: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
