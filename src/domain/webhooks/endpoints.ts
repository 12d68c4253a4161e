import { Prisma, type PrismaClient } from '../../db/client';
import { ApiError, notFound } from '../requests/errors';
import { parseInput } from '../requests/validation';
import type { EventName } from '../event-log/event-catalog';
import { newId } from '../values/ids';
import {
  assertPublicDestination,
  DestinationNotAllowedError,
  resolveAll,
  isTrustedDestination,
  type DestinationPolicy,
  type HostResolver,
} from '../../webhooks/destination';
import {
  WEBHOOK_LIMITS,
  ZCreateWebhookEndpoint,
  ZUpdateWebhookEndpoint,
  type WebhookEndpointView,
  type WebhookEndpointStatus,
} from './endpoint.schemas';
import { encryptSigningSecret, generateSigningSecret } from './signing-secrets';
import type { ServiceSecret } from '../keys/service-keys';

/**
 * Webhook endpoint management, shared by the operator CLI (`npm run cli -- webhooks ...`) and the
 * admin API (/admin/v1/apps/{appId}/webhook-endpoints). Input is validated here, once, for both.
 */
export interface WebhookEndpointDeps {
  prisma: PrismaClient;
  serviceSecret: ServiceSecret;
  destinations: DestinationPolicy;
  /** DNS resolution of endpoint hosts (real DNS unless a test injects one). */
  resolve?: HostResolver;
}

/** An endpoint addressed by id, optionally within one app (the admin API's tenancy check). */
export interface EndpointRef {
  endpointId: string;
  appId?: string;
}

export interface CreatedWebhookEndpoint {
  endpoint: WebhookEndpointView;
  /** Shown once; only its ciphertext is stored. */
  signingSecret: string;
}

type EndpointRow = Prisma.WebhookEndpointGetPayload<object>;

export function toWebhookEndpoint(row: EndpointRow): WebhookEndpointView {
  return {
    id: row.id,
    appId: row.appId,
    url: row.url,
    description: row.description,
    events: row.events as EventName[],
    allEvents: row.events.length === 0,
    status: row.status as WebhookEndpointStatus,
    secretVersion: row.secretVersion,
    secretRotatedAt: row.secretRotatedAt?.toISOString() ?? null,
    archivedAt: row.archivedAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function invalidField(field: string, message: string): ApiError {
  return new ApiError('bad_request', `Invalid body: ${field}: ${message}`, { fields: [{ field: `body.${field}`, message }] });
}

/**
 * The endpoint URL rules: absolute https URL (http too when private destinations are allowed), at most
 * 2048 characters, no credentials, no fragment, and, unless private destinations are allowed, a host
 * whose every resolved address is public. Returns the normalised URL that is stored and compared.
 */
export async function validateEndpointUrl(raw: string, policy: DestinationPolicy, resolve: HostResolver = resolveAll): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidField('url', 'must be an absolute URL');
  }
  const schemes = policy.allowPrivateDestinations ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) throw invalidField('url', 'must use https');
  if (url.username || url.password) throw invalidField('url', 'must not contain credentials');
  if (url.hash) throw invalidField('url', 'must not contain a fragment');
  if (url.href.length > WEBHOOK_LIMITS.urlMaxChars) throw invalidField('url', `must be at most ${WEBHOOK_LIMITS.urlMaxChars} characters`);
  if (!policy.allowPrivateDestinations && !isTrustedDestination(url, policy)) {
    try {
      await assertPublicDestination(url, resolve);
    } catch (err) {
      if (!(err instanceof DestinationNotAllowedError)) throw err;
      throw new ApiError('webhook_destination_not_allowed', `Webhook URL refused: ${err.message}`, {
        host: err.host,
        reason: err.reason,
        ...(err.address ? { address: err.address } : {}),
      });
    }
  }
  return url.href;
}

async function requireApp(prisma: PrismaClient, appId: string): Promise<void> {
  const app = appId.length <= 64 ? await prisma.app.findUnique({ where: { id: appId }, select: { id: true } }) : null;
  if (!app) throw notFound('App');
}

function isUniqueViolation(err: unknown): boolean {
  return err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002';
}

export async function createWebhookEndpoint(deps: WebhookEndpointDeps, appId: string, rawInput: unknown): Promise<CreatedWebhookEndpoint> {
  const input = parseInput(ZCreateWebhookEndpoint, rawInput, 'body');
  await requireApp(deps.prisma, appId);
  const url = await validateEndpointUrl(input.url, deps.destinations, deps.resolve);
  const id = newId('webhookEndpoint');
  const signingSecret = generateSigningSecret();
  try {
    const row = await deps.prisma.webhookEndpoint.create({
      data: {
        id,
        appId,
        url,
        description: input.description ?? null,
        events: input.events,
        status: 'enabled',
        secretCiphertext: encryptSigningSecret(deps.serviceSecret, id, signingSecret),
      },
    });
    return { endpoint: toWebhookEndpoint(row), signingSecret };
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    const existing = await deps.prisma.webhookEndpoint.findFirst({
      where: { appId, url, status: { not: 'archived' } },
      select: { id: true },
    });
    throw new ApiError('conflict', 'An active webhook endpoint of this app already uses this URL', { endpointId: existing?.id ?? null });
  }
}

export async function listWebhookEndpoints(prisma: PrismaClient, appId: string): Promise<{ items: WebhookEndpointView[] }> {
  await requireApp(prisma, appId);
  const rows = await prisma.webhookEndpoint.findMany({ where: { appId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
  return { items: rows.map(toWebhookEndpoint) };
}

export async function loadEndpointRow(prisma: PrismaClient, ref: EndpointRef): Promise<EndpointRow> {
  const row = ref.endpointId.length <= 64 ? await prisma.webhookEndpoint.findUnique({ where: { id: ref.endpointId } }) : null;
  if (!row || (ref.appId !== undefined && row.appId !== ref.appId)) throw notFound('Webhook endpoint');
  return row;
}

export async function getWebhookEndpoint(prisma: PrismaClient, ref: EndpointRef): Promise<WebhookEndpointView> {
  return toWebhookEndpoint(await loadEndpointRow(prisma, ref));
}

export function archivedError(endpointId: string): ApiError {
  return new ApiError('webhook_endpoint_archived', 'This webhook endpoint is archived: it cannot be changed or reactivated', {
    endpointId,
  });
}

/** Applies a change to a non-archived endpoint; the condition is re-checked in the UPDATE itself. */
async function changeEndpoint(
  prisma: PrismaClient,
  ref: EndpointRef,
  data: Prisma.WebhookEndpointUpdateManyMutationInput,
): Promise<EndpointRow> {
  const row = await loadEndpointRow(prisma, ref);
  if (row.status === 'archived') throw archivedError(row.id);
  const { count } = await prisma.webhookEndpoint.updateMany({ where: { id: row.id, status: { not: 'archived' } }, data });
  if (count === 0) throw archivedError(row.id);
  return loadEndpointRow(prisma, ref);
}

export async function updateWebhookEndpoint(prisma: PrismaClient, ref: EndpointRef, rawInput: unknown): Promise<WebhookEndpointView> {
  if (typeof rawInput === 'object' && rawInput !== null && 'url' in rawInput) {
    throw invalidField('url', 'is immutable after creation: create a new endpoint and archive this one');
  }
  const input = parseInput(ZUpdateWebhookEndpoint, rawInput, 'body');
  const data: Prisma.WebhookEndpointUpdateManyMutationInput = {};
  if (input.description !== undefined) data.description = input.description;
  if (input.events !== undefined) data.events = input.events;
  return toWebhookEndpoint(await changeEndpoint(prisma, ref, data));
}

/** A disabled endpoint receives no new events (deliveries already retrying stop at their next attempt). */
export async function disableWebhookEndpoint(prisma: PrismaClient, ref: EndpointRef): Promise<WebhookEndpointView> {
  return toWebhookEndpoint(await changeEndpoint(prisma, ref, { status: 'disabled' }));
}

export async function enableWebhookEndpoint(prisma: PrismaClient, ref: EndpointRef): Promise<WebhookEndpointView> {
  return toWebhookEndpoint(await changeEndpoint(prisma, ref, { status: 'enabled' }));
}

/** Permanent: an archived endpoint can't be changed, re-enabled or rotated, and frees its URL. */
export async function archiveWebhookEndpoint(prisma: PrismaClient, ref: EndpointRef): Promise<WebhookEndpointView> {
  return toWebhookEndpoint(await changeEndpoint(prisma, ref, { status: 'archived', archivedAt: new Date() }));
}

/** A new secret, shown once; the previous one stops signing at once (every attempt reads the current one). */
export async function rotateWebhookEndpointSecret(
  deps: Pick<WebhookEndpointDeps, 'prisma' | 'serviceSecret'>,
  ref: EndpointRef,
): Promise<CreatedWebhookEndpoint> {
  const row = await loadEndpointRow(deps.prisma, ref);
  const signingSecret = generateSigningSecret();
  const updated = await changeEndpoint(deps.prisma, ref, {
    secretCiphertext: encryptSigningSecret(deps.serviceSecret, row.id, signingSecret),
    secretVersion: { increment: 1 },
    secretRotatedAt: new Date(),
  });
  return { endpoint: toWebhookEndpoint(updated), signingSecret };
}
