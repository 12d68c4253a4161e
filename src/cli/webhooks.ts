import { parseArgs } from 'node:util';
import type { ServiceConfig } from '../config';
import { dataDir } from '../embedded/paths';
import { createCursorCodec } from '../domain/requests/pagination';
import { getWebhookDelivery, listWebhookDeliveries, redeliverWebhook } from '../domain/webhooks/deliveries';
import { recoverWebhookEndpoint } from '../domain/webhooks/recovery';
import {
  archiveWebhookEndpoint,
  createWebhookEndpoint,
  disableWebhookEndpoint,
  enableWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookEndpointSecret,
  updateWebhookEndpoint,
  type WebhookEndpointDeps,
} from '../domain/webhooks/endpoints';
import { openDatabase } from '../runtime/database';
import { resolveServiceKeys } from '../runtime/service-secret';

import type { CliContext, Register } from './shared';

/**
 * Operator commands for webhook endpoints and deliveries (the admin API's twin, same service module):
 *   webhooks create --app <appId> --url <url> [--description <text>] [--events a,b]
 *   webhooks list --app <appId>
 *   webhooks get <endpointId>
 *   webhooks update <endpointId> [--description <text>] [--events a,b | --all-events]
 *   webhooks disable|enable|archive|rotate-secret <endpointId>
 *   webhooks deliveries --app <appId> [--endpoint <endpointId>] [--status <status>] [--limit n] [--cursor c]
 *   webhooks attempts <deliveryId>
 *   webhooks redeliver <deliveryId>
 *   webhooks recover <endpointId> --since <ISO time>
 * Signing secrets are encrypted with SERVICE_SECRET (or .data/service-secret), so the CLI must run
 * with the same one as the service. Private destinations follow WEBHOOKS_ALLOW_PRIVATE_DESTINATIONS.
 */
export const WEBHOOK_CLI_USAGE = `  npm run cli -- webhooks create --app <appId> --url <url> [--description <text>] [--events a,b]
  npm run cli -- webhooks list --app <appId>
  npm run cli -- webhooks get|disable|enable|archive|rotate-secret <endpointId>
  npm run cli -- webhooks update <endpointId> [--description <text>] [--events a,b | --all-events]
  npm run cli -- webhooks deliveries --app <appId> [--endpoint <endpointId>] [--status pending|retrying|succeeded|abandoned] [--limit n] [--cursor c]
  npm run cli -- webhooks attempts|redeliver <deliveryId>
  npm run cli -- webhooks recover <endpointId> --since <ISO time>`;

class WebhookUsageError extends Error {}

async function withDeps<T>(ctx: CliContext, run: (deps: WebhookEndpointDeps, config: ServiceConfig) => Promise<T>): Promise<T> {
  const config = ctx.config();
  const serviceSecret = resolveServiceKeys(config, dataDir(ctx.env));
  const opened = await openDatabase(config);
  try {
    return await run({ prisma: opened.db.prisma, serviceSecret, destinations: config.webhooks }, config);
  } finally {
    await opened.close();
  }
}

function eventList(value: string | undefined): string[] | undefined {
  return value === undefined
    ? undefined
    : value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
}

/** The one positional id of commands that act on a single endpoint or delivery. */
function oneId(name: string, argv: string[]): string {
  const { positionals } = parseArgs({ args: argv, options: {}, allowPositionals: true, strict: true });
  if (positionals.length !== 1 || !positionals[0]) throw new WebhookUsageError(`${name} takes exactly one id\n${WEBHOOK_CLI_USAGE}`);
  return positionals[0];
}

export function registerWebhookCommands(register: Register): void {
  register('webhooks create', async (argv, ctx) => {
    const { values } = parseArgs({
      args: argv,
      options: { app: { type: 'string' }, url: { type: 'string' }, description: { type: 'string' }, events: { type: 'string' } },
      strict: true,
    });
    if (!values.app || !values.url) throw new WebhookUsageError(`webhooks create needs --app and --url\n${WEBHOOK_CLI_USAGE}`);
    const input = { url: values.url, description: values.description, events: eventList(values.events) };
    return withDeps(ctx, (deps) => createWebhookEndpoint(deps, values.app as string, input));
  });

  register('webhooks list', async (argv, ctx) => {
    const { values } = parseArgs({ args: argv, options: { app: { type: 'string' } }, strict: true });
    if (!values.app) throw new WebhookUsageError(`webhooks list needs --app\n${WEBHOOK_CLI_USAGE}`);
    return withDeps(ctx, (deps) => listWebhookEndpoints(deps.prisma, values.app as string));
  });

  register('webhooks get', async (argv, ctx) => {
    const endpointId = oneId('webhooks get', argv);
    return withDeps(ctx, (deps) => getWebhookEndpoint(deps.prisma, { endpointId }));
  });

  register('webhooks update', async (argv, ctx) => {
    const { values, positionals } = parseArgs({
      args: argv,
      options: { description: { type: 'string' }, events: { type: 'string' }, 'all-events': { type: 'boolean' }, url: { type: 'string' } },
      allowPositionals: true,
      strict: true,
    });
    const endpointId = positionals[0];
    if (!endpointId || positionals.length !== 1) throw new WebhookUsageError(`webhooks update takes one endpoint id\n${WEBHOOK_CLI_USAGE}`);
    if (values.events !== undefined && values['all-events']) throw new WebhookUsageError('use either --events or --all-events');
    const input: Record<string, unknown> = {};
    // --url is accepted only to be refused with the service's own message: the URL is immutable.
    if (values.url !== undefined) input.url = values.url;
    if (values.description !== undefined) input.description = values.description === '' ? null : values.description;
    if (values.events !== undefined) input.events = eventList(values.events);
    if (values['all-events']) input.events = [];
    return withDeps(ctx, (deps) => updateWebhookEndpoint(deps.prisma, { endpointId }, input));
  });

  register('webhooks disable', async (argv, ctx) => {
    const endpointId = oneId('webhooks disable', argv);
    return withDeps(ctx, (deps) => disableWebhookEndpoint(deps.prisma, { endpointId }));
  });

  register('webhooks enable', async (argv, ctx) => {
    const endpointId = oneId('webhooks enable', argv);
    return withDeps(ctx, (deps) => enableWebhookEndpoint(deps.prisma, { endpointId }));
  });

  register('webhooks archive', async (argv, ctx) => {
    const endpointId = oneId('webhooks archive', argv);
    return withDeps(ctx, (deps) => archiveWebhookEndpoint(deps.prisma, { endpointId }));
  });

  register('webhooks rotate-secret', async (argv, ctx) => {
    const endpointId = oneId('webhooks rotate-secret', argv);
    return withDeps(ctx, (deps) => rotateWebhookEndpointSecret(deps, { endpointId }));
  });

  register('webhooks deliveries', async (argv, ctx) => {
    const { values } = parseArgs({
      args: argv,
      options: {
        app: { type: 'string' },
        endpoint: { type: 'string' },
        status: { type: 'string' },
        limit: { type: 'string' },
        cursor: { type: 'string' },
      },
      strict: true,
    });
    if (!values.app) throw new WebhookUsageError(`webhooks deliveries needs --app\n${WEBHOOK_CLI_USAGE}`);
    const query = { endpointId: values.endpoint, status: values.status, limit: values.limit, cursor: values.cursor };
    return withDeps(ctx, (deps) => listWebhookDeliveries(deps.prisma, createCursorCodec(deps.serviceSecret), values.app as string, query));
  });

  register('webhooks attempts', async (argv, ctx) => {
    const deliveryId = oneId('webhooks attempts', argv);
    return withDeps(ctx, (deps) => getWebhookDelivery(deps.prisma, { deliveryId }));
  });

  register('webhooks redeliver', async (argv, ctx) => {
    const deliveryId = oneId('webhooks redeliver', argv);
    return withDeps(ctx, (deps) => redeliverWebhook(deps.prisma, { deliveryId }));
  });

  register('webhooks recover', async (argv, ctx) => {
    const { values, positionals } = parseArgs({ args: argv, options: { since: { type: 'string' } }, allowPositionals: true, strict: true });
    const endpointId = positionals[0];
    if (!endpointId || positionals.length !== 1 || !values.since)
      throw new WebhookUsageError(`webhooks recover takes one endpoint id and --since\n${WEBHOOK_CLI_USAGE}`);
    return withDeps(ctx, (deps) => recoverWebhookEndpoint(deps.prisma, { endpointId }, { since: values.since }));
  });
}
