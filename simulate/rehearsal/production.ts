import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { loadEnvironmentsReport, type TEnvironments } from '../../src/config/environments';
import { parseRpcUrlSettings, rpcUrlSetting } from '../../src/config/network-settings';
import { productionConfigProblems } from '../../src/config/production-check';
import { projectRoot } from '../../src/platform/project-root';

/**
 * The rehearsal's deployment as production runs one: `DEPLOYMENT=production`, a seed made offline by
 * `custody create-seed` (the CLI) and read only by the workers, the extended public keys alone in the
 * APIs, the networks by catalog code with their RPC URLs from `RPC_URLS_<CODE>`, no sandbox-only
 * switch. What production would reach over the network is here on this machine: the chains on its
 * non-loopback address (the production check refuses loopback RPC URLs, as it should), and the
 * partners' webhook receivers on loopback over https, trusted by name (WEBHOOKS_TRUSTED_DESTINATIONS).
 */

/** The catalog codes the rehearsal runs: Base Sepolia for the sandbox app, Base and Ethereum for the production app. */
export const REHEARSAL_NETWORKS = { sandbox: ['base-sepolia'], production: ['base', 'ethereum'] } as const;

/** A block a second here: 2 confirmations, as the sandbox chain, keep a Payment's wait short. */
const CONFIRMATIONS = 2;

/**
 * The environments file: the bundled file's modules, fees, vault and bank-account settings, with
 * every network a catalog reference (no RPC URL, no token address, no anvil chain in the file).
 */
export function productionCatalog(bundled: { environments: Record<'sandbox' | 'production', Record<string, unknown>> }): unknown {
  const refs = (codes: readonly string[]) => codes.map((code) => ({ code, assets: ['USDC', 'EURC'], confirmations: CONFIRMATIONS }));
  const sandbox = bundled.environments.sandbox;
  const vaults = sandbox.vaults as Record<string, unknown> | undefined;
  const publicPayments = sandbox.publicPayments as { destinations?: Array<Record<string, unknown>> } | undefined;
  // What the bundled file puts on the anvil chain moves to Base Sepolia.
  const onSandboxChain = <T extends Record<string, unknown>>(x: T) => ({ ...x, chainId: BASE_SEPOLIA_CHAIN_ID });
  return {
    ...bundled,
    environments: {
      sandbox: {
        ...sandbox,
        networks: refs(REHEARSAL_NETWORKS.sandbox),
        ...(vaults ? { vaults: onSandboxChain(vaults) } : {}),
        ...(publicPayments
          ? { publicPayments: { ...publicPayments, destinations: (publicPayments.destinations ?? []).map(onSandboxChain) } }
          : {}),
      },
      production: { ...bundled.environments.production, networks: refs(REHEARSAL_NETWORKS.production) },
    },
  };
}

export const BASE_SEPOLIA_CHAIN_ID = 84532;

/** This machine's first non-loopback IPv4 address: where the chains listen, as a provider's RPC would. */
export function hostAddress(): string {
  for (const addresses of Object.values(networkInterfaces()))
    for (const a of addresses ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  throw new Error('the rehearsal runs its chains on a non-loopback address (production refuses loopback RPC URLs); this machine has none');
}

export interface Custody {
  seedFile: string;
  /** CUSTODY_PUBLIC_KEYS, as `custody create-seed` printed it. */
  publicKeys: string;
}

/** A new seed from the built CLI, as an operator makes one offline; the file is the workers' CUSTODY_MNEMONIC_FILE. */
export function createSeedWithCli(dir: string): Custody {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const seedFile = path.join(dir, 'seed.txt');
  rmSync(seedFile, { force: true }); // a fresh run's chains are new: so is its seed
  const out = execFileSync(
    process.execPath,
    [path.join(projectRoot(), 'dist', 'src', 'cli', 'index.js'), 'custody', 'create-seed', '--out', seedFile],
    {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '' },
    },
  );
  const printed = JSON.parse(out) as { seedFile: string; env: { CUSTODY_PUBLIC_KEYS: string } };
  return { seedFile: printed.seedFile, publicKeys: printed.env.CUSTODY_PUBLIC_KEYS };
}

export interface Tls {
  keyFile: string;
  certFile: string;
}

/** A self-signed certificate for 127.0.0.1 (openssl), for the receivers; the services trust it through NODE_EXTRA_CA_CERTS. */
export function receiverCertificate(dir: string): Tls {
  mkdirSync(dir, { recursive: true });
  const tls = { keyFile: path.join(dir, 'receiver-key.pem'), certFile: path.join(dir, 'receiver-cert.pem') };
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ].concat(['-keyout', tls.keyFile, '-out', tls.certFile]),
    { stdio: 'ignore' },
  );
  return tls;
}

export interface ProductionInput {
  dataDir: string;
  /** Each process role's own login (the owner migrated before any starts, as compose's migrate). */
  databaseUrls: { api: string; worker: string };
  temporalAddress: string;
  temporal: { namespace: string; taskQueue: string };
  serviceSecret: string;
  custody: Custody;
  /** RPC URL of each catalog code the rehearsal runs. */
  rpcUrls: Record<string, string>;
  offramp: { url: string; callbackSecret: string };
  /** `host:port` of each webhook receiver. */
  receivers: string[];
  tls: Tls;
}

export interface ProductionEnv {
  catalogFile: string;
  /** Each role's settings with its own database login; the workers add the seed. */
  api: Record<string, string>;
  worker: Record<string, string>;
  /** The operator CLI's: the API's, with the worker's login (it writes what the worker writes) and no seed. */
  operator: Record<string, string>;
}

/** Every setting of the service processes, the catalog written; nothing a sandbox default would fill in. */
export function productionEnv(input: ProductionInput): ProductionEnv {
  const catalogFile = path.join(input.dataDir, 'environments.json');
  const bundled = JSON.parse(readFileSync(path.join(projectRoot(), 'config', 'environments.json'), 'utf8'));
  writeFileSync(catalogFile, `${JSON.stringify(productionCatalog(bundled), null, 2)}\n`);
  const common: Record<string, string> = {
    NODE_ENV: 'production',
    DEPLOYMENT: 'production',
    TEMPORAL_ADDRESS: input.temporalAddress,
    TEMPORAL_NAMESPACE: input.temporal.namespace,
    TEMPORAL_TASK_QUEUE: input.temporal.taskQueue,
    ENVIRONMENTS_FILE: catalogFile,
    DATA_DIR: input.dataDir,
    SERVICE_SECRET: input.serviceSecret,
    METRICS_TOKEN: randomBytes(24).toString('hex'),
    PUBLIC_BASE_URL: 'https://payments.rehearsal.example',
    // The load reaches the API directly, with no proxy in front.
    TRUSTED_PROXIES: 'none',
    CUSTODY_PUBLIC_KEYS: input.custody.publicKeys,
    OFFRAMP_PROVIDER_URL: input.offramp.url,
    OFFRAMP_CALLBACK_SECRET: input.offramp.callbackSecret,
    WEBHOOKS_ALLOW_PRIVATE_DESTINATIONS: 'false',
    WEBHOOKS_TRUSTED_DESTINATIONS: input.receivers.join(','),
    NODE_EXTRA_CA_CERTS: input.tls.certFile,
    // One partner app sends the whole load: the per-credential quota is not under test.
    RATE_LIMIT_POINTS: '1000000',
    LOG_LEVEL: 'warn',
    ...Object.fromEntries(Object.entries(input.rpcUrls).map(([code, url]) => [rpcUrlSetting(code), url])),
  };
  const worker = { ...common, WORKER_DATABASE_URL: input.databaseUrls.worker };
  return {
    catalogFile,
    api: { ...common, API_DATABASE_URL: input.databaseUrls.api },
    worker: { ...worker, CUSTODY_MNEMONIC_FILE: input.custody.seedFile },
    operator: worker,
  };
}

/** The production check of each role, as the service runs it at start; throws listing every problem. */
export function assertProductionShape(env: ProductionEnv): TEnvironments {
  let environments: TEnvironments | undefined;
  for (const [role, settings] of [
    ['api', env.api],
    ['worker', env.worker],
  ] as const) {
    const config = loadConfig(settings);
    const report = loadEnvironmentsReport(config.environmentsFile, { rpcUrls: parseRpcUrlSettings(settings).settings });
    const problems = productionConfigProblems({ config, report, roles: [role], env: settings });
    if (config.deployment !== 'production') problems.push(`DEPLOYMENT: ${config.deployment}, not production`);
    if ('CUSTODY_MNEMONIC_FILE' in settings && role === 'api') problems.push('the API must not hold the seed');
    for (const other of ['DATABASE_URL', role === 'api' ? 'WORKER_DATABASE_URL' : 'API_DATABASE_URL'])
      if (other in settings) problems.push(`the ${role} must not hold ${other}, another role's login`);
    if (problems.length > 0) throw new Error(`the rehearsal's ${role} is not production-shaped:\n  ${problems.join('\n  ')}`);
    environments = report.environments;
  }
  return environments!;
}
