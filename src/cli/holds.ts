import type { PrismaClient } from '../db/client';
import type { ServiceConfig } from '../config';
import { activeOperator, type SignedInOperator } from '../domain/operators/operator-accounts';
import type { Acting } from '../domain/operators/operator-approvals';
import { releaseHold } from '../domain/operators/operator-approvals';
import type { HeldTarget } from '../domain/operators/operator-actions';
import { openDatabase } from '../runtime/database';
import { chainsFor, parseResolutionArgs, withEngine, type CliContext } from './shared';

/**
 * The CLI acts as the operator `--actor` names when it is one; otherwise as that typed name, which
 * may release a hold but never ask for a money-moving action (operator-approvals.ts refuses a request
 * from anyone but an operator). Whoever runs the CLI holds the database: this names, it does not
 * authenticate.
 */
export async function cliActing(prisma: PrismaClient, actor: string): Promise<Acting> {
  const operator: SignedInOperator = (await activeOperator(prisma, actor)) ?? {
    id: `cli:${actor}`,
    email: actor,
    name: actor,
    role: 'operator',
  };
  return { operator, channel: 'cli' };
}

/** `<command> resolve <id> --action ... [--actor <who>]`: the release, or the request it becomes. */
export async function resolveFromCli(ctx: CliContext, type: HeldTarget['type'], argv: string[], usage: string) {
  const { id, actor, ...input } = parseResolutionArgs(argv, usage);
  const config: ServiceConfig = ctx.config();
  const opened = await openDatabase(config);
  try {
    const who = await cliActing(opened.db.prisma, actor);
    const outcome = await withEngine(config, (engine) =>
      releaseHold({ prisma: opened.db.prisma, chains: chainsFor(config), engine }, who, { type, id }, input),
    );
    return 'done' in outcome ? outcome.done : outcome;
  } finally {
    await opened.close();
  }
}
