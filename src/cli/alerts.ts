import { parseArgs } from 'node:util';
import { listAlerts } from '../domain/monitoring/alerts';
import { createCursorCodec } from '../domain/requests/pagination';
import { dataDir } from '../embedded/paths';
import { openDatabase } from '../runtime/database';
import { resolveServiceKeys } from '../runtime/service-secret';

import type { Register } from './shared';

/**
 *   alerts list [--open] [--kind ledger_difference|payment_workflow_missing|settlement_dropped|deposit_unrecorded|gas_treasury_empty|return_destination_refused] [--limit n] [--cursor c]
 *       operator alerts, newest first: {items: [{id, kind, severity, subject, details, createdAt,
 *       updatedAt, resolvedAt}], nextCursor}. --open lists only the unresolved ones.
 */
export function registerAlertCommands(register: Register): void {
  register('alerts list', async (argv, ctx) => {
    const { values } = parseArgs({
      args: argv,
      options: { open: { type: 'boolean' }, kind: { type: 'string' }, limit: { type: 'string' }, cursor: { type: 'string' } },
      strict: true,
    });
    const config = ctx.config();
    const cursors = createCursorCodec(resolveServiceKeys(config, dataDir(ctx.env)));
    const opened = await openDatabase(config);
    try {
      return await listAlerts(opened.db.prisma, cursors, {
        ...(values.open ? { open: 'true' } : {}),
        ...(values.kind ? { kind: values.kind } : {}),
        ...(values.limit ? { limit: values.limit } : {}),
        ...(values.cursor ? { cursor: values.cursor } : {}),
      });
    } finally {
      await opened.close();
    }
  });
}
