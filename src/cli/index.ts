import { parseArgs } from 'node:util';
import { loadEnvironments } from '../config/environments';
import { createApp, SCOPES, type Scope } from '../domain/apps/apps';
import { ZAppIdInput } from '../domain/apps/app-credentials';
import { revokeAppCredential, rotateAppCredential } from '../domain/operators/operator-actions';
import { parseInput } from '../domain/requests/validation';
import type { CliContext } from './shared';
import { openDatabase } from '../runtime/database';
import { registerAlertCommands } from './alerts';
import { registerKeyCommands } from './keys';
import { CUSTODY_USAGE, registerCustodyCommands } from './custody';
import { registerLedgerCommands } from './ledger';
import { registerPaymentCommands } from './payments';
import { registerDepositCommands } from './deposits';
import { registerFundReturnCommands } from './returns';
import { registerWebhookCommands } from './webhooks';
import { DASHBOARD_CLI_USAGE, registerDashboardCommands } from './dashboard';
import { OPERATORS_CLI_USAGE, registerOperatorCommands } from './operators';
import { APPROVALS_CLI_USAGE, registerApprovalCommands } from './approvals';
import { registerSandboxCommands, SANDBOX_USAGE } from './sandbox';
import { jsonText } from '../domain/values/json-text';
import { cliContext, CommandFailed, UsageError, type Command } from './shared';

/**
 * Operator CLI. Each command prints exactly one JSON object on stdout; diagnostics go to stderr.
 *   apps create --environment sandbox|production --name <name> [--scopes v2:accounts,...]
 *   apps rotate-secret <appId> --actor <who> [--overlap-seconds <n>] [--reason <text>]
 *   apps revoke <appId> --actor <who> [--reason <text>]
 */
const ROTATE_USAGE = 'apps rotate-secret <appId> --actor <who> [--overlap-seconds <n>] [--reason <text>]';
const REVOKE_USAGE = 'apps revoke <appId> --actor <who> [--reason <text>]';
const USAGE = `usage:
  npm run cli -- apps create --environment sandbox|production --name <name> [--scopes ${SCOPES.join(',')}]
  npm run cli -- ${ROTATE_USAGE}
  npm run cli -- ${REVOKE_USAGE}
  npm run cli -- keys reseal
${CUSTODY_USAGE}
${DASHBOARD_CLI_USAGE}
${OPERATORS_CLI_USAGE}
${APPROVALS_CLI_USAGE}
${SANDBOX_USAGE}`;

const commands: Record<string, Command> = {
  'apps create': async (argv, ctx) => {
    const { values } = parseArgs({
      args: argv,
      options: { environment: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'string' } },
      strict: true,
    });
    if (!values.environment || !values.name) throw new UsageError('apps create needs --environment and --name');
    const scopes = values.scopes
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean) as Scope[] | undefined;
    const config = ctx.config();
    const envs = loadEnvironments(config.environmentsFile);
    const opened = await openDatabase(config);
    try {
      return await createApp(
        opened.db.prisma,
        { name: values.name, environment: values.environment as 'sandbox', ...(scopes ? { scopes } : {}) },
        envs.apiVersion,
      );
    } finally {
      await opened.close();
    }
  },
};

/** The app id and the audited action's fields of `apps rotate-secret` and `apps revoke`. */
function credentialArgs(argv: string[], usage: string, withOverlap: boolean) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      actor: { type: 'string' },
      reason: { type: 'string' },
      ...(withOverlap ? { 'overlap-seconds': { type: 'string' as const } } : {}),
    },
    strict: true,
  });
  const overlap = (values as Record<string, string | undefined>)['overlap-seconds'];
  if (positionals.length !== 1 || !values.actor) throw new UsageError(`usage: ${usage}`);
  if (overlap !== undefined && !/^\d{1,9}$/.test(overlap))
    throw new UsageError(`--overlap-seconds must be a whole number of seconds; usage: ${usage}`);
  return {
    appId: parseInput(ZAppIdInput, positionals[0], 'path'),
    body: {
      actor: values.actor,
      ...(values.reason ? { reason: values.reason } : {}),
      ...(overlap !== undefined ? { overlapSeconds: Number(overlap) } : {}),
    },
  };
}

async function withPrisma<T>(ctx: CliContext, run: (prisma: Parameters<typeof rotateAppCredential>[0]) => Promise<T>): Promise<T> {
  const opened = await openDatabase(ctx.config());
  try {
    return await run(opened.db.prisma);
  } finally {
    await opened.close();
  }
}

commands['apps rotate-secret'] = async (argv, ctx) => {
  const { appId, body } = credentialArgs(argv, ROTATE_USAGE, true);
  return withPrisma(ctx, (prisma) => rotateAppCredential(prisma, 'cli', appId, body));
};

commands['apps revoke'] = async (argv, ctx) => {
  const { appId, body } = credentialArgs(argv, REVOKE_USAGE, false);
  return withPrisma(ctx, (prisma) => revokeAppCredential(prisma, 'cli', appId, body));
};

export function registerCommand(name: string, command: Command): void {
  commands[name] = command;
}

registerLedgerCommands(registerCommand);
registerPaymentCommands(registerCommand);
registerDepositCommands(registerCommand);
registerFundReturnCommands(registerCommand);
registerWebhookCommands(registerCommand);
registerDashboardCommands(registerCommand);
registerOperatorCommands(registerCommand);
registerApprovalCommands(registerCommand);
registerSandboxCommands(registerCommand);
registerAlertCommands(registerCommand);
registerKeyCommands(registerCommand);
registerCustodyCommands(registerCommand);

export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** Runs one command; answers its exit code. Tests call it in their own process with their own io. */
export async function runCli(
  argv: string[],
  io: CliIo = { env: process.env, stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  const name = argv.slice(0, 2).join(' ');
  const command = commands[name];
  if (!command) {
    io.stderr.write(`${USAGE}\n`);
    return 2;
  }
  try {
    const result = await command(argv.slice(2), cliContext(io.env, io.stderr));
    io.stdout.write(`${jsonText(result)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof CommandFailed) io.stdout.write(`${jsonText(err.result)}\n`);
    const message = err instanceof Error ? err.message : String(err);
    io.stderr.write(`error: ${message}\n${err instanceof UsageError ? `${USAGE}\n` : ''}`);
    return err instanceof UsageError ? 2 : 1;
  }
}

if (require.main === module) {
  void runCli(process.argv.slice(2)).then((code) => process.exit(code));
}
