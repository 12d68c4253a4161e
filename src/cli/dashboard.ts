import { parseArgs } from 'node:util';
import { ZAppIdInput } from '../domain/apps/app-credentials';
import { invitePartnerUser, listPartnerUsers, removePartnerUser, ZPartnerEmail } from '../domain/dashboard/partner-users';
import { sandboxSignInCode, unlockSignIn } from '../domain/dashboard/sign-in';
import { parseInput } from '../domain/requests/validation';
import { openDatabase } from '../runtime/database';
import { UsageError, type CliContext, type Register } from './shared';

/**
 * Operator commands for the partner dashboard's users (the admin API's twin, same domain module):
 *   dashboard invite --app <appId> --email <email> --role admin|developer|viewer --actor <who>
 *   dashboard users --app <appId>
 *   dashboard remove --app <appId> --user <puser_...> --actor <who>
 *   dashboard sandbox-code --email <email>    the newest sign-in code in the sandbox outbox (no SMTP)
 *   dashboard unlock --email <email>          lets an email locked by wrong codes ask for codes again
 */
export const DASHBOARD_CLI_USAGE = `  npm run cli -- dashboard invite --app <appId> --email <email> --role admin|developer|viewer --actor <who>
  npm run cli -- dashboard users --app <appId>
  npm run cli -- dashboard remove --app <appId> --user <userId> --actor <who>
  npm run cli -- dashboard sandbox-code --email <email>
  npm run cli -- dashboard unlock --email <email>`;

async function withPrisma<T>(
  ctx: CliContext,
  run: (prisma: Awaited<ReturnType<typeof openDatabase>>['db']['prisma']) => Promise<T>,
): Promise<T> {
  const opened = await openDatabase(ctx.config());
  try {
    return await run(opened.db.prisma);
  } finally {
    await opened.close();
  }
}

const options = {
  app: { type: 'string' },
  email: { type: 'string' },
  role: { type: 'string' },
  actor: { type: 'string' },
  user: { type: 'string' },
} as const;

function args(argv: string[], needed: Array<keyof typeof options>) {
  const { values } = parseArgs({ args: argv, options, strict: true });
  const missing = needed.filter((k) => !values[k]);
  if (missing.length > 0) throw new UsageError(`needs ${missing.map((k) => `--${k}`).join(', ')}\nusage:\n${DASHBOARD_CLI_USAGE}`);
  return values;
}

export function registerDashboardCommands(register: Register): void {
  register('dashboard invite', async (argv, ctx) => {
    const v = args(argv, ['app', 'email', 'role', 'actor']);
    const appId = parseInput(ZAppIdInput, v.app, 'path');
    return withPrisma(ctx, (prisma) => invitePartnerUser(prisma, appId, { email: v.email, role: v.role, actor: v.actor }));
  });
  register('dashboard users', async (argv, ctx) => {
    const v = args(argv, ['app']);
    const appId = parseInput(ZAppIdInput, v.app, 'path');
    return withPrisma(ctx, (prisma) => listPartnerUsers(prisma, appId));
  });
  register('dashboard remove', async (argv, ctx) => {
    const v = args(argv, ['app', 'user', 'actor']);
    const appId = parseInput(ZAppIdInput, v.app, 'path');
    return withPrisma(ctx, (prisma) => removePartnerUser(prisma, appId, v.user!, v.actor!));
  });
  register('dashboard unlock', async (argv, ctx) => {
    const email = parseInput(ZPartnerEmail, args(argv, ['email']).email, 'query');
    return withPrisma(ctx, (prisma) => unlockSignIn(prisma, email));
  });
  register('dashboard sandbox-code', async (argv, ctx) => {
    const v = args(argv, ['email']);
    const email = parseInput(ZPartnerEmail, v.email, 'query');
    return withPrisma(ctx, async (prisma) => ({ email, code: await sandboxSignInCode(prisma, email) }));
  });
}
