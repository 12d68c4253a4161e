import type { ServiceConfig } from '../config';
import { loadEnvironmentsReport, type TEnvironments } from '../config/environments';
import { assertProductionConfig } from '../config/production-check';
import type { Logger } from '../logger';

/**
 * The environments this process runs: the file's networks with their RPC URLs from the settings.
 * In production the whole configuration is checked first (every problem in one error); in the
 * sandbox a network without an RPC URL is only left out (no chain client, no scanner), and said so.
 */
export function loadServiceEnvironments(
  config: ServiceConfig,
  logger: Logger,
  roles: ReadonlyArray<'api' | 'worker'>,
  env: NodeJS.ProcessEnv = process.env,
): TEnvironments {
  const report = loadEnvironmentsReport(config.environmentsFile, { rpcUrls: config.rpcUrls });
  if (config.deployment === 'production') assertProductionConfig({ config, report, roles, env });
  for (const n of report.leftOut) {
    logger.warn(
      { environment: n.environment, network: n.code, chainId: n.chainId, setting: n.setting },
      `network ${n.code} left out: no RPC URL (set ${n.setting})`,
    );
  }
  return report.environments;
}
