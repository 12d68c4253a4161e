import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config';
import { DEFAULT_ENVIRONMENTS_FILE, loadEnvironmentsReport } from '../../src/config/environments';
import { productionConfigProblems } from '../../src/config/production-check';
import { projectRoot } from '../../src/platform/project-root';
import { createLogger } from '../../src/logger';
import { startService } from '../../src/runtime/service';
import { chainsFor } from '../../src/cli/shared';

const EXAMPLE_FILE = path.join(projectRoot(), 'config', 'environments.production.example.json');
const dir = mkdtempSync(path.join(os.tmpdir(), 'production-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** What an operator sets for the example file: two chains with two assets each, and their test networks. */
const GOOD: NodeJS.ProcessEnv = {
  DEPLOYMENT: 'production',
  DATABASE_URL: 'postgresql://pp:secret@db.internal:5432/pp',
  API_DATABASE_URL: 'postgresql://pp_api:secret@db.internal:5432/pp',
  WORKER_DATABASE_URL: 'postgresql://pp_worker:secret@db.internal:5432/pp',
  TEMPORAL_ADDRESS: 'temporal.internal:7233',
  SERVICE_SECRET: 's'.repeat(64),
  SMTP_URL: 'smtp://mail.internal:587',
  PUBLIC_BASE_URL: 'https://pay.example.com',
  TRUSTED_PROXIES: '10.0.0.0/8',
  ENVIRONMENTS_FILE: EXAMPLE_FILE,
  RPC_URLS_BASE: 'https://base-1.example/v2/key,https://base-2.example',
  RPC_URLS_ETHEREUM: 'https://eth-1.example/v2/key,https://eth-2.example',
  RPC_URLS_BASE_SEPOLIA: 'https://base-sepolia.example',
  RPC_URLS_ETHEREUM_SEPOLIA: 'https://sepolia.example',
  CUSTODY_MNEMONIC_FILE: '/run/secrets/custody_seed',
  CUSTODY_PUBLIC_KEYS: 'escrow:xpub-placeholder',
};

function problemsOf(env: NodeJS.ProcessEnv, roles: Array<'api' | 'worker'> = ['api', 'worker']): string[] {
  const config = loadConfig(env);
  const report = loadEnvironmentsReport(config.environmentsFile, { rpcUrls: config.rpcUrls });
  return productionConfigProblems({ config, report, roles, env });
}

function without(...names: string[]): NodeJS.ProcessEnv {
  const env = { ...GOOD };
  for (const name of names) delete env[name];
  return env;
}

/** An environments file like the example, changed by `edit`. */
function exampleWith(edit: (envs: any) => void): string {
  const envs = JSON.parse(readFileSync(EXAMPLE_FILE, 'utf8'));
  edit(envs);
  const file = path.join(dir, `envs-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(envs));
  return file;
}

/** Exactly one problem, about `setting`. */
function assertOneProblem(problems: string[], setting: string, about: RegExp): void {
  assert.equal(problems.length, 1, problems.join('\n'));
  assert.ok(problems[0]!.startsWith(`${setting}: `), problems[0]);
  assert.match(problems[0]!, about);
}

describe('production configuration', () => {
  test('the example environments file with its settings is a good production configuration: two chains, two assets each', () => {
    assert.deepEqual(problemsOf(GOOD), []);
    const config = loadConfig(GOOD);
    const { environments, leftOut } = loadEnvironmentsReport(config.environmentsFile, { rpcUrls: config.rpcUrls });
    assert.deepEqual(leftOut, []);
    const production = environments.environments.production.networks;
    assert.deepEqual(
      production.map((n) => [n.code, n.chainId, n.assets.map((a) => a.symbol)]),
      [
        ['base', 8453, ['USDC', 'EURC']],
        ['ethereum', 1, ['USDC', 'EURC']],
      ],
    );
    assert.deepEqual(production[0]!.fallbackRpcUrls, ['https://base-2.example']);
    assert.deepEqual(
      environments.environments.sandbox.networks.map((n) => n.code),
      ['base-sepolia', 'ethereum-sepolia'],
    );
  });

  test('SMTP_URL is not required: without it no console sign-in code is sent, and operators use their admin API tokens', () => {
    assert.deepEqual(problemsOf(without('SMTP_URL')), []);
  });

  test('each sandbox default is refused with the setting that replaces it', () => {
    assert.deepEqual(problemsOf(without('DATABASE_URL')), [], 'the roles need not hold the owner’s login');
    assertOneProblem(problemsOf(without('API_DATABASE_URL'), ['api']), 'API_DATABASE_URL', /login of its own/);
    assertOneProblem(problemsOf(without('WORKER_DATABASE_URL'), ['worker']), 'WORKER_DATABASE_URL', /login of its own/);
    assertOneProblem(problemsOf(without('TEMPORAL_ADDRESS')), 'TEMPORAL_ADDRESS', /embedded Temporal/);
    assertOneProblem(problemsOf(without('SERVICE_SECRET')), 'SERVICE_SECRET', /generates one under/);
    assertOneProblem(problemsOf(without('PUBLIC_BASE_URL')), 'PUBLIC_BASE_URL', /localhost/);
    assertOneProblem(problemsOf({ ...GOOD, PUBLIC_BASE_URL: 'http://127.0.0.1:3000' }), 'PUBLIC_BASE_URL', /local/);
    assertOneProblem(problemsOf({ ...GOOD, PUBLIC_BASE_URL: 'http://pay.example.com' }), 'PUBLIC_BASE_URL', /must be https/);
    assertOneProblem(
      problemsOf({ ...GOOD, WEBHOOKS_ALLOW_PRIVATE_DESTINATIONS: 'true' }),
      'WEBHOOKS_ALLOW_PRIVATE_DESTINATIONS',
      /private/,
    );
  });

  test("console sign-in through the company's provider is https both ways, and its three settings go together", () => {
    const OIDC = {
      OPERATOR_OIDC_ISSUER: 'https://id.example.com',
      OPERATOR_OIDC_CLIENT_ID: 'payments-console',
      OPERATOR_OIDC_CLIENT_SECRET: 'c'.repeat(40),
    };
    assert.deepEqual(problemsOf({ ...GOOD, ...OIDC, ADMIN_BASE_URL: 'https://ops.pay.example.com' }), []);
    assertOneProblem(problemsOf({ ...GOOD, ...OIDC }), 'ADMIN_BASE_URL', /required with OPERATOR_OIDC_ISSUER/);
    assertOneProblem(problemsOf({ ...GOOD, ...OIDC, ADMIN_BASE_URL: 'http://10.0.0.5:3001' }), 'ADMIN_BASE_URL', /https URL/);
    assertOneProblem(
      problemsOf({ ...GOOD, ...OIDC, ADMIN_BASE_URL: 'https://ops.pay.example.com', OPERATOR_OIDC_ISSUER: 'http://id.example.com' }),
      'OPERATOR_OIDC_ISSUER',
      /must be https/,
    );
    assert.deepEqual(
      problemsOf({ ...GOOD, ...OIDC, ADMIN_BASE_URL: 'http://10.0.0.5:3001' }, ['worker']),
      [],
      'the worker serves no console',
    );
    for (const left of Object.keys(OIDC))
      assert.throws(
        () => loadConfig({ ...GOOD, ...OIDC, [left]: undefined }),
        (err: unknown) => err instanceof ConfigError && /go together/.test(err.message),
        `without ${left}`,
      );
    const config = loadConfig({ ...GOOD, ...OIDC, ADMIN_BASE_URL: 'https://ops.pay.example.com/' });
    assert.equal(config.admin.baseUrl, 'https://ops.pay.example.com', 'kept without its trailing slash');
    assert.deepEqual(config.admin.oidc, { issuer: 'https://id.example.com', clientId: 'payments-console', clientSecret: 'c'.repeat(40) });
  });

  test('the API and the worker each log in as a role of their own, never as the owner', () => {
    const owner = GOOD.DATABASE_URL!;
    assertOneProblem(problemsOf({ ...GOOD, API_DATABASE_URL: owner }, ['api']), 'API_DATABASE_URL', /DATABASE_URL's owner/);
    assertOneProblem(problemsOf({ ...GOOD, WORKER_DATABASE_URL: owner }, ['worker']), 'WORKER_DATABASE_URL', /DATABASE_URL's owner/);
    assertOneProblem(
      problemsOf({ ...GOOD, WORKER_DATABASE_URL: GOOD.API_DATABASE_URL }),
      'WORKER_DATABASE_URL',
      /as API_DATABASE_URL does/,
    );
    assert.deepEqual(loadConfig(GOOD).database.roles, { api: 'pp_api', worker: 'pp_worker' });
  });

  test('the API needs TRUSTED_PROXIES said out loud: its proxies, or none; the worker serves no clients', () => {
    assertOneProblem(problemsOf(without('TRUSTED_PROXIES')), 'TRUSTED_PROXIES', /reverse proxies .* or `none`/);
    assertOneProblem(problemsOf({ ...GOOD, TRUSTED_PROXIES: ' ' }), 'TRUSTED_PROXIES', /required/);
    assert.deepEqual(problemsOf({ ...GOOD, TRUSTED_PROXIES: 'none' }), []);
    assert.deepEqual(problemsOf(without('TRUSTED_PROXIES'), ['worker']), []);
  });

  test('TRUSTED_PROXIES=none trusts no proxy; none beside an address is refused; unset is none but not declared', () => {
    assert.deepEqual(loadConfig({ TRUSTED_PROXIES: 'none' }).http, { ...loadConfig({}).http, proxiesDeclared: true });
    assert.deepEqual(loadConfig({ TRUSTED_PROXIES: 'none' }).http.trustedProxies, []);
    assert.equal(loadConfig({}).http.proxiesDeclared, false);
    assert.deepEqual(loadConfig({ TRUSTED_PROXIES: '10.0.0.1, loopback' }).http.trustedProxies, ['10.0.0.1', 'loopback']);
    assert.throws(
      () => loadConfig({ TRUSTED_PROXIES: 'none,10.0.0.1' }),
      (err: unknown) => err instanceof ConfigError && /TRUSTED_PROXIES: none stands alone/.test(err.message),
    );
  });

  test('the custody keys are required: the seed where the worker signs, the public keys everywhere', () => {
    assertOneProblem(
      problemsOf(without('CUSTODY_MNEMONIC_FILE'), ['worker']),
      'CUSTODY_MNEMONIC_FILE (or CUSTODY_MNEMONIC)',
      /never generates a seed/,
    );
    assert.deepEqual(problemsOf({ ...without('CUSTODY_MNEMONIC_FILE'), CUSTODY_MNEMONIC: 'words' }, ['worker']), []);
    assert.deepEqual(problemsOf(without('CUSTODY_MNEMONIC_FILE'), ['api']), [], 'an API alone needs no seed');
    assertOneProblem(problemsOf(without('CUSTODY_PUBLIC_KEYS'), ['api']), 'CUSTODY_PUBLIC_KEYS', /create-seed/);
  });

  test('a network named by the environments file with no RPC URL set is refused, naming its setting', () => {
    assertOneProblem(problemsOf(without('RPC_URLS_BASE')), 'RPC_URLS_BASE', /environment production enables network base/);
    assertOneProblem(
      problemsOf(without('RPC_URLS_ETHEREUM_SEPOLIA')),
      'RPC_URLS_ETHEREUM_SEPOLIA',
      /environment sandbox enables network ethereum-sepolia/,
    );
  });

  test('an anvil or other local RPC URL is refused, without echoing the URL (it may carry a key)', () => {
    const problems = problemsOf({ ...GOOD, RPC_URLS_BASE: 'https://base-1.example/v2/key,http://localhost:8545' });
    assertOneProblem(problems, 'RPC_URLS_BASE', /URL 2 .*local/);
    assert.doesNotMatch(problems[0]!, /v2\/key/);
    assertOneProblem(problemsOf({ ...GOOD, RPC_URLS_ETHEREUM: 'http://127.0.0.1:8545' }), 'RPC_URLS_ETHEREUM', /local/);
  });

  test('the bundled sandbox environments (anvil, the test token) are refused', () => {
    const problems = problemsOf(without('ENVIRONMENTS_FILE'));
    assert.ok(problems.length >= 3, problems.join('\n'));
    for (const p of problems)
      assert.match(
        p,
        /^(ENVIRONMENTS_FILE: .*ENVIRONMENTS_FILE is unset|OFFRAMP_PROVIDER_URL: .*environment sandbox enables bank_accounts)/,
      );
    assert.ok(problems.some((p) => /anvil chain 31337/.test(p)));
    assert.ok(problems.some((p) => /test token/.test(p)));
    assert.ok(problems.some((p) => /production environment names no networks/.test(p)));
  });

  test('the test token, or a full network config on a local URL, in a deployment’s own file is refused', () => {
    const sandbox = JSON.parse(readFileSync(DEFAULT_ENVIRONMENTS_FILE, 'utf8')).environments.sandbox.networks[0];
    const file = exampleWith((envs) => {
      envs.environments.production.networks.push({ ...sandbox, code: 'custom', chainId: 777, rpcUrl: 'http://[::1]:8545' });
    });
    const problems = problemsOf({ ...GOOD, ENVIRONMENTS_FILE: file });
    assert.equal(problems.length, 2, problems.join('\n'));
    assert.ok(
      problems.some((p) => /^ENVIRONMENTS_FILE: URL 1 of environment production network custom points at a local node \(\[::1\]\)/.test(p)),
    );
    assert.ok(
      problems.some((p) => /^ENVIRONMENTS_FILE: environment production network custom asset USDC is the sandbox's test token/.test(p)),
    );
  });

  test('bank accounts without an off-ramp provider are refused (the sandbox runs its own)', () => {
    const file = exampleWith((envs) => {
      envs.environments.production.modules.push('bank_accounts');
      envs.environments.production.bankAccounts = { providerCode: 'acme', countries: [] };
    });
    assertOneProblem(problemsOf({ ...GOOD, ENVIRONMENTS_FILE: file }), 'OFFRAMP_PROVIDER_URL', /bank_accounts/);
    assert.deepEqual(
      problemsOf({
        ...GOOD,
        ENVIRONMENTS_FILE: file,
        OFFRAMP_PROVIDER_URL: 'https://offramp.example',
        OFFRAMP_CALLBACK_SECRET: 'c'.repeat(40),
      }),
      [],
    );
  });

  test('every problem at once, each naming its setting', () => {
    const problems = problemsOf({ DEPLOYMENT: 'production' });
    for (const setting of [
      'API_DATABASE_URL',
      'WORKER_DATABASE_URL',
      'TEMPORAL_ADDRESS',
      'SERVICE_SECRET',
      'PUBLIC_BASE_URL',
      'TRUSTED_PROXIES',
      'ENVIRONMENTS_FILE',
    ]) {
      assert.ok(
        problems.some((p) => p.startsWith(`${setting}: `)),
        `${setting} in:\n${problems.join('\n')}`,
      );
    }
  });

  test('the service refuses to start in production with every problem in one error, before it starts anything', async () => {
    const config = loadConfig({
      DEPLOYMENT: 'production',
      DATABASE_URL: GOOD.DATABASE_URL,
      API_DATABASE_URL: GOOD.API_DATABASE_URL,
      WORKER_DATABASE_URL: GOOD.WORKER_DATABASE_URL,
      ENVIRONMENTS_FILE: EXAMPLE_FILE,
    });
    await assert.rejects(startService({ config, logger: createLogger('silent'), roles: ['api', 'worker'] }), (err: Error) => {
      assert.ok(err instanceof ConfigError, String(err));
      for (const setting of [
        'TEMPORAL_ADDRESS',
        'SERVICE_SECRET',
        'PUBLIC_BASE_URL',
        'RPC_URLS_BASE',
        'RPC_URLS_ETHEREUM',
        'RPC_URLS_BASE_SEPOLIA',
      ]) {
        assert.match(err.message, new RegExp(`${setting}: `));
      }
      assert.doesNotMatch(err.message, /DATABASE_URL: /);
      assert.doesNotMatch(err.message, /API_DATABASE_URL: |WORKER_DATABASE_URL: /);
      return true;
    });
  });

  test('an operator command in production refuses a network without an RPC URL instead of skipping its chain', () => {
    assert.throws(() => chainsFor(loadConfig(without('RPC_URLS_ETHEREUM'))), /RPC_URLS_ETHEREUM/);
    assert.deepEqual(
      chainsFor(loadConfig(GOOD))
        .networks()
        .map((n) => n.chainId)
        .sort((a, b) => a - b),
      [1, 8453, 84532, 11155111],
    );
  });
});
