import { parseArgs } from 'node:util';
import { approveRequest, listApprovals, rejectRequest } from '../domain/operators/operator-approvals';
import { openDatabase } from '../runtime/database';
import { cliActing } from './holds';
import { serviceChains, UsageError, withEngine, type CliContext, type Register } from './shared';

/**
 * Two-person approvals from the CLI (the console's and the admin API's twin): the approver is the
 * operator `--actor` names, with the approver role, and never the one who asked.
 */
export const APPROVALS_CLI_USAGE = `  npm run cli -- approvals list [--all]
  npm run cli -- approvals approve <approval_...> --actor <operator email>
  npm run cli -- approvals reject <approval_...> --actor <operator email> [--reason <text>]`;

function decisionArgs(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { actor: { type: 'string' }, reason: { type: 'string' } },
    strict: true,
  });
  if (positionals.length !== 1 || !values.actor) throw new UsageError(`usage:\n${APPROVALS_CLI_USAGE}`);
  return { id: positionals[0]!, actor: values.actor, reason: values.reason };
}

async function decideFromCli(ctx: CliContext, argv: string[], verdict: 'approve' | 'reject') {
  const { id, actor, reason } = decisionArgs(argv);
  const config = ctx.config();
  const { chains, addressBook: custody } = serviceChains(config, ctx.env);
  const opened = await openDatabase(config);
  try {
    const who = await cliActing(opened.db.prisma, actor);
    return await withEngine(config, (engine) => {
      const deps = { prisma: opened.db.prisma, chains, custody, engine };
      return verdict === 'approve' ? approveRequest(deps, who, id) : rejectRequest(deps, who, id, reason);
    });
  } finally {
    await opened.close();
  }
}

export function registerApprovalCommands(register: Register): void {
  register('approvals list', async (argv, ctx) => {
    const { values } = parseArgs({ args: argv, options: { all: { type: 'boolean' } }, strict: true });
    const opened = await openDatabase(ctx.config());
    try {
      return await listApprovals(opened.db.prisma, { pendingOnly: !values.all });
    } finally {
      await opened.close();
    }
  });
  register('approvals approve', (argv, ctx) => decideFromCli(ctx, argv, 'approve'));
  register('approvals reject', (argv, ctx) => decideFromCli(ctx, argv, 'reject'));
}
