import { isAddressEqual } from 'viem';
import { ANVIL_CHAIN_ID, SANDBOX_TOKEN_ADDRESS } from '../chain/sandbox';
import { ConfigError, userOf, type ServiceConfig } from './index';
import type { EnvironmentName, EnvironmentsReport, TNetworkConfig } from './environments';
import { rpcUrlSetting } from './network-settings';

export interface ProductionCheckInput {
  config: ServiceConfig;
  /** The environments as loaded with config.rpcUrls (loadEnvironmentsReport). */
  report: EnvironmentsReport;
  /** The roles this process runs: the API serves the operator console. */
  roles: ReadonlyArray<'api' | 'worker'>;
  /** The process environment, for the custody settings (read where the keys load, checked here for presence). */
  env?: NodeJS.ProcessEnv;
}

/**
 * Everything a production deployment must set that the sandbox makes up for itself (embedded
 * PostgreSQL and Temporal, a generated service key, anvil and its test token, localhost URLs), each
 * problem starting with the setting that fixes it. Empty: the configuration is fit for production.
 * The custody keys are only checked for presence here; src/custody/supply.ts reads and verifies them.
 */
export function productionConfigProblems({ config, report, roles, env = {} }: ProductionCheckInput): string[] {
  return [
    ...databaseProblems(config, roles),
    ...serviceProblems(config, roles),
    ...custodyProblems(env, roles),
    ...environmentsProblems(config, report),
  ];
}

/**
 * Each role logs in as itself, never as the owner (DATABASE_URL) nor as the other role; whether a
 * login is a superuser or can write what it must not is checked against the database at start
 * (src/db/roles.ts, loginProblems).
 */
function databaseProblems(config: ServiceConfig, roles: ProductionCheckInput['roles']): string[] {
  const { url, apiUrl, workerUrl } = config.database;
  const owner = userOf(url);
  const problems: string[] = [];
  for (const [role, setting, login] of [
    ['api', 'API_DATABASE_URL', apiUrl],
    ['worker', 'WORKER_DATABASE_URL', workerUrl],
  ] as const) {
    if (!roles.includes(role)) continue;
    if (!login)
      problems.push(
        `${setting}: required where the ${role} runs, a login of its own; without it the ${role} uses DATABASE_URL's (the owner's) or an embedded PostgreSQL`,
      );
    else if (owner && userOf(login) === owner)
      problems.push(`${setting}: logs in as ${owner}, DATABASE_URL's owner; the ${role} needs its own role`);
  }
  if (roles.includes('api') && roles.includes('worker') && apiUrl && workerUrl && userOf(apiUrl) === userOf(workerUrl))
    problems.push(
      `WORKER_DATABASE_URL: logs in as ${userOf(workerUrl)}, as API_DATABASE_URL does; the API and the worker each need a role of their own`,
    );
  return problems;
}

function custodyProblems(env: NodeJS.ProcessEnv, roles: ProductionCheckInput['roles']): string[] {
  const problems: string[] = [];
  const set = (name: string) => Boolean(env[name]?.trim());
  if (roles.includes('worker') && !set('CUSTODY_MNEMONIC_FILE') && !set('CUSTODY_MNEMONIC')) {
    problems.push(
      'CUSTODY_MNEMONIC_FILE (or CUSTODY_MNEMONIC): required where the worker signs; production never generates a seed (npm run cli -- custody create-seed)',
    );
  }
  if (!set('CUSTODY_PUBLIC_KEYS'))
    problems.push(
      'CUSTODY_PUBLIC_KEYS: required, the extended public keys `custody create-seed` printed (the API derives every address from them)',
    );
  return problems;
}

/** Throws one ConfigError listing every problem; the service calls it before it starts anything. */
export function assertProductionConfig(input: ProductionCheckInput): void {
  const problems = productionConfigProblems(input);
  if (problems.length > 0) throw new ConfigError(`invalid production configuration (DEPLOYMENT=production):\n  ${problems.join('\n  ')}`);
}

function serviceProblems(config: ServiceConfig, roles: ProductionCheckInput['roles']): string[] {
  const problems: string[] = [];
  if (!config.temporal.address) problems.push('TEMPORAL_ADDRESS: required; without it the service starts an embedded Temporal dev server');
  if (!config.serviceSecret)
    problems.push(
      'SERVICE_SECRET: required (32+ characters); without it the service generates one under its data directory, which another process or a new container would not share',
    );
  if (isLocalUrl(config.http.publicBaseUrl))
    problems.push('PUBLIC_BASE_URL: required, the public https URL of the API; the default points at localhost');
  else if (!config.http.publicBaseUrl.startsWith('https:'))
    problems.push('PUBLIC_BASE_URL: must be https in production (over http the sign-in cookies lose Secure and no HSTS is sent)');
  // Unset would mean "no proxy": behind a load balancer every client would then share its address in
  // the per-address limits, so production makes the operator say which. The worker serves no clients.
  if (roles.includes('api') && !config.http.proxiesDeclared)
    problems.push(
      'TRUSTED_PROXIES: required: the addresses or CIDR ranges of the reverse proxies in front of the service, or `none` when clients connect directly',
    );
  problems.push(...adminProblems(config, roles));
  if (config.webhooks.allowPrivateDestinations)
    problems.push('WEBHOOKS_ALLOW_PRIVATE_DESTINATIONS: must be false; webhooks to private or local addresses are a sandbox convenience');
  return problems;
}

/** Where the console signs in through the company's provider, the whole round trip is https. */
function adminProblems(config: ServiceConfig, roles: ProductionCheckInput['roles']): string[] {
  const { oidc, baseUrl, baseUrlDeclared } = config.admin;
  if (!roles.includes('api') || !oidc) return [];
  const problems: string[] = [];
  if (!oidc.issuer.startsWith('https:')) problems.push('OPERATOR_OIDC_ISSUER: must be https in production');
  if (!baseUrlDeclared || !baseUrl?.startsWith('https:'))
    problems.push(
      "ADMIN_BASE_URL: required with OPERATOR_OIDC_ISSUER in production, the admin listener's https URL as operators reach it (the provider redirects there)",
    );
  return problems;
}

function environmentsProblems(config: ServiceConfig, report: EnvironmentsReport): string[] {
  const file = 'ENVIRONMENTS_FILE';
  const hint = config.environmentsFile
    ? ''
    : ' (ENVIRONMENTS_FILE is unset: the bundled sandbox file is used; config/environments.production.example.json shows a deployment’s)';
  const problems: string[] = report.leftOut.map(
    (n) => `${n.setting}: required: environment ${n.environment} enables network ${n.code} (chain ${n.chainId}), which has no RPC URL`,
  );
  const envs = report.environments.environments;
  for (const environment of ['sandbox', 'production'] as const) {
    for (const network of envs[environment].networks) problems.push(...networkProblems(config, environment, network).map((p) => p + hint));
    const bank = envs[environment].modules.includes('bank_accounts') && envs[environment].bankAccounts;
    if (bank && !config.offramp.providerUrl)
      problems.push(`OFFRAMP_PROVIDER_URL: required: environment ${environment} enables bank_accounts (the sandbox runs its own provider)`);
  }
  if (envs.production.networks.length === 0 && !report.leftOut.some((n) => n.environment === 'production')) {
    problems.push(`${file}: the production environment names no networks${hint}`);
  }
  return problems;
}

function networkProblems(config: ServiceConfig, environment: EnvironmentName, network: TNetworkConfig): string[] {
  const file = 'ENVIRONMENTS_FILE';
  const problems: string[] = [];
  const where = `environment ${environment} network ${network.code}`;
  const setting = rpcUrlSetting(network.code);
  const fromSetting = Boolean(config.rpcUrls[setting]);
  if (network.chainId === ANVIL_CHAIN_ID) problems.push(`${file}: ${where} is the local anvil chain ${ANVIL_CHAIN_ID}`);
  // Only the host is named: a provider's URL often carries its API key.
  [network.rpcUrl, ...network.fallbackRpcUrls].forEach((url, i) => {
    if (!isLocalUrl(url)) return;
    const local = `URL ${i + 1} of ${where} points at a local node (${hostOf(url)}), as anvil in the sandbox`;
    problems.push(fromSetting ? `${setting}: ${local}` : `${file}: ${local}; set ${setting} to the network's RPC URLs`);
  });
  for (const asset of network.assets) {
    if (isAddressEqual(asset.tokenAddress as `0x${string}`, SANDBOX_TOKEN_ADDRESS))
      problems.push(`${file}: ${where} asset ${asset.symbol} is the sandbox's test token ${SANDBOX_TOKEN_ADDRESS}`);
  }
  return problems;
}

const hostOf = (url: string) => {
  try {
    return new URL(url).hostname;
  } catch {
    return 'not a URL';
  }
};

/** localhost, a loopback or unspecified address, or anvil's usual host names. */
function isLocalUrl(url: string): boolean {
  const host = hostOf(url)
    .replace(/^\[|\]$/g, '')
    .toLowerCase();
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    /^127\./.test(host) ||
    host === '0.0.0.0' ||
    host === '::1' ||
    host === '::' ||
    host === 'anvil' ||
    host === 'not a url'
  );
}
