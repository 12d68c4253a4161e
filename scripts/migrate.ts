import { loadConfig } from '../src/config';
import { applyMigrations } from '../src/db/migrate';

/**
 * One-shot migration runner for the production shape (docker-compose's `migrate` service): as the
 * owner (DATABASE_URL), then the grants of the API's and the worker's roles (API_/WORKER_DATABASE_ROLE).
 */
async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.database.url) throw new Error('DATABASE_URL (the owner’s login) is required');
  const { roles } = config.database;
  if (config.deployment === 'production' && !roles)
    throw new Error('API_DATABASE_ROLE and WORKER_DATABASE_ROLE are required in production: the roles granted their access');
  const result = await applyMigrations(config.database.url, roles ? { grants: roles } : {});
  process.stdout.write(`${JSON.stringify({ ...result, granted: roles ?? null })}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`migration failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
