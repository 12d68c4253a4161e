import { parseArgs } from 'node:util';
import { dataDir } from '../embedded/paths';
import { resealAll } from '../domain/keys/reseal';
import { openDatabase } from '../runtime/database';
import { resolveServiceKeys } from '../runtime/service-secret';
import { CommandFailed, type Register } from './shared';

/**
 *   keys reseal
 *       seals every sealed column again under SERVICE_SECRET (the keyring's current key), opening each
 *       row under whichever key of SERVICE_SECRET and SERVICE_SECRET_PREVIOUS sealed it; prints per
 *       column how many rows were resealed, were already current, and which no key opens (exit 1).
 */
export function registerKeyCommands(register: Register): void {
  register('keys reseal', async (argv, ctx) => {
    parseArgs({ args: argv, options: {}, strict: true });
    const config = ctx.config();
    const keys = resolveServiceKeys(config, dataDir(ctx.env));
    const opened = await openDatabase(config);
    try {
      const report = await resealAll(opened.db.prisma, keys);
      const unreadable = report.columns.reduce((n, c) => n + c.unreadable.length, 0);
      if (unreadable > 0)
        throw new CommandFailed(`${unreadable} sealed rows open under no accepted key: keep their key in SERVICE_SECRET_PREVIOUS`, report);
      return report;
    } finally {
      await opened.close();
    }
  });
}
