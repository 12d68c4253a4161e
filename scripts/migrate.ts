import { loadConfig } from '../src/config';
import { applyMigrations } from '../src/db/migrate';

/** One-shot migration runner for the production shape (docker-compose's `migrate` service). */
async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.database.url) throw new Error('DATABASE_URL is required');
  const result = await applyMigrations(config.database.url);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`migration failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
