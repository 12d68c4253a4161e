import { parseArgs } from 'node:util';
import { loadEnvironments } from '../config/environments';
import { createApp, SCOPES, type Scope } from '../domain/apps';
import { openDatabase } from '../runtime/database';
import { registerAlertCommands } from './alerts';
import { registerLedgerCommands } from './ledger';
import { registerPaymentCommands } from './payments';
import { registerDepositCommands } from './deposits';
import { registerFundReturnCommands } from './returns';
import { registerWebhookCommands } from './webhooks';
import { registerSandboxCommands, SANDBOX_USAGE } from './sandbox';
import { jsonText } from '../domain/json-text';
import { cliContext, CommandFailed, UsageError, type Command } from './shared';

/**
 * Operator CLI. Each command prints exactly one JSON object on stdout; diagnostics go to stderr.
 *   apps create --environment sandbox|production --name <name> [--scopes v2:accounts,...]
 */
const USAGE = `usage:
  npm run cli -- apps create --environment sandbox|production --name <name> [--scopes ${SCOPES.join(',')}]
${SANDBOX_USAGE}`;

const commands: Record<string, Command> = {
  'apps create': async (argv, ctx) => {
    const { values } = parseArgs({
      args: argv,
      options: { environment: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'string' } },
      strict: true,
    });
    if (!values.environment || !values.name) throw new UsageError('apps create needs --environment and --name');
    const scopes = values.scopes?.split(',').map((s) => s.trim()).filter(Boolean) as Scope[] | undefined;
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

export function registerCommand(name: string, command: Command): void {
  commands[name] = command;
}

registerLedgerCommands(registerCommand);
registerPaymentCommands(registerCommand);
registerDepositCommands(registerCommand);
registerFundReturnCommands(registerCommand);
registerWebhookCommands(registerCommand);
registerSandboxCommands(registerCommand);
registerAlertCommands(registerCommand);

export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** Runs one command; answers its exit code. Tests call it in their own process with their own io. */
export async function runCli(argv: string[], io: CliIo = { env: process.env, stdout: process.stdout, stderr: process.stderr }): Promise<number> {
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
