import { parseArgs } from 'node:util';
import { dataDir } from '../embedded/paths';
import type { PrismaClient } from '../db/client';
import type { ServiceSecret } from '../domain/keys/service-keys';
import {
  createOperator,
  disableOperator,
  issueOperatorToken,
  listOperators,
  listOperatorTokens,
  revokeOperatorToken,
} from '../domain/operators/operator-accounts';
import { outboxOperatorCode } from '../domain/operators/operator-sign-in';
import { openDatabase } from '../runtime/database';
import { resolveServiceKeys } from '../runtime/service-secret';
import { UsageError, type CliContext, type Register } from './shared';

/**
 * Operator accounts (src/domain/operators/operator-accounts.ts): the only way to create or disable one,
 * and to issue or revoke an operator's admin API token. A secret (the TOTP secret, a token) is printed
 * once, here, and never stored in the clear.
 */
export const OPERATORS_CLI_USAGE = `  npm run cli -- operators create --email <email> --name <name> --role viewer|operator|approver|admin
  npm run cli -- operators list
  npm run cli -- operators disable --email <email>
  npm run cli -- operators token-create --email <email> --name <name> --days <1-366>
  npm run cli -- operators token-list --email <email>
  npm run cli -- operators token-revoke --token-id <optok_...>
  npm run cli -- operators dev-code --email <email>     (no SMTP, development only: the newest emailed code)`;

const options = {
  email: { type: 'string' },
  name: { type: 'string' },
  role: { type: 'string' },
  days: { type: 'string' },
  'token-id': { type: 'string' },
} as const;

function args(argv: string[], needed: Array<keyof typeof options>) {
  const { values } = parseArgs({ args: argv, options, strict: true });
  const missing = needed.filter((k) => !values[k]);
  if (missing.length > 0) throw new UsageError(`needs ${missing.map((k) => `--${k}`).join(', ')}\nusage:\n${OPERATORS_CLI_USAGE}`);
  return values;
}

async function withDb<T>(ctx: CliContext, run: (prisma: PrismaClient, serviceSecret: ServiceSecret) => Promise<T>): Promise<T> {
  const config = ctx.config();
  const serviceSecret = resolveServiceKeys(config, dataDir(ctx.env));
  const opened = await openDatabase(config);
  try {
    return await run(opened.db.prisma, serviceSecret);
  } finally {
    await opened.close();
  }
}

export function registerOperatorCommands(register: Register): void {
  register('operators create', async (argv, ctx) => {
    const v = args(argv, ['email', 'name', 'role']);
    return withDb(ctx, (prisma, secret) => createOperator(prisma, secret, { email: v.email, name: v.name, role: v.role }));
  });
  register('operators list', async (argv, ctx) => {
    args(argv, []);
    return withDb(ctx, async (prisma) => ({ items: await listOperators(prisma) }));
  });
  register('operators disable', async (argv, ctx) => {
    const v = args(argv, ['email']);
    return withDb(ctx, (prisma) => disableOperator(prisma, v.email!));
  });
  register('operators token-create', async (argv, ctx) => {
    const v = args(argv, ['email', 'name', 'days']);
    return withDb(ctx, (prisma) => issueOperatorToken(prisma, v.email!, { name: v.name, days: v.days }));
  });
  register('operators token-list', async (argv, ctx) => {
    const v = args(argv, ['email']);
    return withDb(ctx, async (prisma) => ({ items: await listOperatorTokens(prisma, v.email!) }));
  });
  register('operators token-revoke', async (argv, ctx) => {
    const v = args(argv, ['token-id']);
    return withDb(ctx, (prisma) => revokeOperatorToken(prisma, v['token-id']!));
  });
  register('operators dev-code', async (argv, ctx) => {
    const v = args(argv, ['email']);
    if (ctx.config().deployment === 'production') throw new UsageError('production sends sign-in codes by mail only');
    return withDb(ctx, async (prisma) => ({ email: v.email, code: await outboxOperatorCode(prisma, v.email!) }));
  });
}
