import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { paths } from './schema';

export type { paths, components, operations } from './schema';
export * from './verify';
export * from './webhook-events';
export { koaWebhook, expressWebhook, type WebhookReceiverOptions } from './receivers';

export interface PartnerClientOptions {
  /** The API's base URL, e.g. https://api.example.com */
  baseUrl: string;
  appId: string;
  appSecret: string;
  /** The API version to pin (sent as Svc-Version); the app's own version when left out. */
  apiVersion?: string;
  fetch?: typeof fetch;
}

export type PartnerClient = Client<paths>;

/**
 * A typed client of the Partner Payments API: paths, parameters, bodies and answers come from the
 * OpenAPI document (`client.POST('/v2/payments', { body, params: { header: { 'Idempotency-Key': key } } })`).
 * Every request carries the app's credentials. Answers are `{ data }` or `{ error }` (the error
 * envelope), with the raw `response`.
 */
export function createPartnerClient(opts: PartnerClientOptions): PartnerClient {
  const client = createClient<paths>({ baseUrl: opts.baseUrl, ...(opts.fetch ? { fetch: opts.fetch } : {}) });
  const authorization = `Basic ${Buffer.from(`${opts.appId}:${opts.appSecret}`).toString('base64')}`;
  const credentials: Middleware = {
    onRequest({ request }) {
      request.headers.set('authorization', authorization);
      if (opts.apiVersion) request.headers.set('svc-version', opts.apiVersion);
      return request;
    },
  };
  client.use(credentials);
  return client;
}
