// First: tracing's instrumentation must be in place before pg and http load (src/telemetry/tracing.ts).
import './telemetry/start';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from './config';
import { createLogger } from './logger';
import { startService, type Role } from './runtime/service';
import { Lifecycle } from './runtime/lifecycle';
import { tracingStarted } from './telemetry/tracing';

/**
 * `npm start`: the whole service on one machine (see startService). `--only api` / `--only worker`
 * run one role; the production shape runs them as separate processes.
 */
const lifecycle = new Lifecycle();

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { only: { type: 'string' } } });
  if (values.only && values.only !== 'api' && values.only !== 'worker') throw new Error('--only takes api or worker');
  const roles: Role[] = values.only ? [values.only as Role] : ['api', 'worker'];
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  // Listening from the start, so a Ctrl-C during start-up also stops whatever had started.
  lifecycle.stopOnSignals((line) => process.stdout.write(`${line}\n`));
  // Added first, so stopped last: the spans of the stop itself are exported too.
  const tracing = tracingStarted();
  if (tracing) lifecycle.add('traces', () => tracing.shutdown());
  const service = await startService({ config, logger, roles, lifecycle });

  const chainId = service.environments.environments.sandbox.networks[0]?.chainId;
  const lines = [
    `Partner Payments API is running (${roles.join(' + ')})`,
    service.apiUrl ? `  API:          ${service.apiUrl}  (health: /healthz)` : null,
    service.temporalMetricsUrl ? `  Worker metrics: ${service.temporalMetricsUrl}  (the Temporal runtime's temporal_* series)` : null,
    service.adminUrl
      ? `  Admin plane:  ${service.adminUrl}  (console: /console, admin API: /admin/v1${config.admin.metricsToken ? ', Prometheus: /metrics with METRICS_TOKEN' : ''})`
      : null,
    `  Temporal:     ${service.temporalAddress}  namespace=${config.temporal.namespace}  taskQueue=${config.temporal.taskQueue}`,
    service.uiUrl ? `  Temporal UI:  ${service.uiUrl}` : null,
    `  PostgreSQL:   ${redactUrl(service.database.url)}`,
    service.rpcUrl
      ? `  Sandbox EVM:  ${service.rpcUrl}  (anvil, chain ${chainId}, test USDC ${service.environments.environments.sandbox.networks[0]?.assets[0]?.tokenAddress})`
      : null,
    service.sandboxProviderUrl
      ? `  Off-ramp:     ${service.sandboxProviderUrl}  (sandbox provider; logs in ${path.join(service.dataDir, 'logs', 'sandbox-provider.log')})`
      : null,
    `  Data:         ${service.dataDir}`,
    'Create a credential: npm run cli -- apps create --environment sandbox --name my-app',
    'Create an operator:  npm run cli -- operators create --email you@example.com --name "Your Name" --role admin',
    'Press Ctrl-C to stop.',
  ];
  process.stdout.write(`${lines.filter(Boolean).join('\n')}\n`);
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}

main().catch((err: unknown) => {
  if (lifecycle.stoppedBySignal) return; // a signal stopped the start-up; its handler exits
  process.stderr.write(`failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
