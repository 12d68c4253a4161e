import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import getRawBody from 'raw-body';
import { z } from 'zod';
import type { PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import type { TEnvironments } from '../../config/environments';
import type { VaultFundingEngine } from '../../domain/engine/pure/engine';
import { projectRoot } from '../../platform/project-root';
import { ApiError, notFound } from '../../domain/requests/errors';
import { parseInput } from '../../domain/requests/validation';
import { ZPaymentId } from '../../domain/payments/payment.schemas';
import { toCheckoutPage } from '../../domain/checkout/checkout-view';
import { finalityOfOne } from '../../domain/chain/finality';
import { ZCheckoutSessionRequest, type TCheckoutPage } from '../../domain/checkout/checkout-view.schemas';
import { assertCsrf, openCheckoutSession, readCheckoutSession, type CheckoutSession } from '../../domain/checkout/checkout-session';
import { checkoutVault, payFromVault } from '../../domain/checkout/checkout-vault';
import { renderCheckoutPage } from '../checkout/page';
import { phaseText } from '../checkout/phase-text';
import { qrSvg } from '../checkout/qr';
import type { ApiContext, ApiMiddleware, ApiRouter } from '../context';
import { cookiePlace } from '../sealed-cookies';
import type { ServiceSecret } from '../../domain/keys/service-keys';

export interface CheckoutRouteDeps {
  prisma: PrismaClient;
  environments: TEnvironments;
  serviceSecret: ServiceSecret;
  /** https: the session cookie is Secure. */
  publicBaseUrl: string;
  maxBodyBytes: number;
  /** The Vault option (client API use cases). Absent: the page offers none, and /vault answers 404. */
  vault?: { chains: ChainRegistry; engine: VaultFundingEngine };
  /** Every request's quota (per client address), counted before anything is read. */
  limit: ApiMiddleware;
}

/**
 * Partner logos are shown by their https URL (img-src https:), not proxied: the service fetching any
 * URL a partner names would be a server-side request to anywhere. no-referrer keeps the page's URL
 * from the logo's host. Nothing else leaves 'self'; connect-src 'self' is the status poll.
 */
export const CHECKOUT_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: https:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

/**
 * The payer's session cookie of one Payment. Named by the Payment: over https it is a `__Host-` cookie
 * of Path=/, so one name for all would let a second checkout's session replace the first's.
 */
export const checkoutCookie = (publicBaseUrl: string, paymentId: string) =>
  cookiePlace(publicBaseUrl, `checkout_session_${paymentId}`, `/checkout/${paymentId}`);
const ZPaymentPath = z.strictObject({ paymentId: ZPaymentId });

/** The page's script and stylesheet, read once at start-up from public/checkout/, named by content hash. */
function loadAssets() {
  const dir = path.join(projectRoot(), 'public', 'checkout');
  const files = new Map<string, { body: Buffer; type: string; hash: string }>();
  for (const [name, type] of [
    ['checkout.js', 'text/javascript; charset=utf-8'],
    ['checkout.css', 'text/css; charset=utf-8'],
  ] as const) {
    const body = readFileSync(path.join(dir, name));
    files.set(name, { body, type, hash: createHash('sha256').update(body).digest('hex').slice(0, 16) });
  }
  const url = (name: string) => `/checkout/assets/${name}?v=${files.get(name)!.hash}`;
  return { files, urls: { script: url('checkout.js'), style: url('checkout.css') } };
}

/** Every answer under /checkout/: the strict CSP, no caching, no referrer, no sniffing. */
const checkoutHeaders: ApiMiddleware = async (ctx, next) => {
  ctx.set('Content-Security-Policy', CHECKOUT_CSP);
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Cache-Control', 'no-store');
  await next();
};

/** A form (application/x-www-form-urlencoded) or JSON body, at most maxBytes. */
async function formOrJson(ctx: ApiContext, maxBytes: number): Promise<unknown> {
  let raw: string;
  try {
    raw = (await getRawBody(ctx.req, { limit: maxBytes, encoding: 'utf-8' })).toString();
  } catch {
    throw new ApiError('payload_too_large', `Request body exceeds ${maxBytes} bytes`, { maxBytes });
  }
  if (ctx.is('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(raw));
  if (ctx.is('application/json')) {
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      throw new ApiError('bad_request', 'Request body is not valid JSON');
    }
  }
  throw new ApiError('unsupported_media_type', 'Send the session as application/x-www-form-urlencoded or application/json');
}

type CheckoutAssets = ReturnType<typeof loadAssets>;

/**
 * The hosted checkout behind checkout.paymentUrl (docs/decisions/payments.md, "Hosted checkout"). The Payment id
 * in the URL is a view-only capability: the page and its status show what a payer needs to pay and
 * nothing else. The Vault option needs the payer's identity, handed over once in a POST body and kept
 * in a sealed, HttpOnly session cookie of this Payment (`checkoutCookie`).
 */
export function registerCheckoutRoutes(router: ApiRouter, deps: CheckoutRouteDeps): void {
  const assets = loadAssets();
  router.use('/checkout', checkoutHeaders, deps.limit);
  registerAssets(router, assets);
  registerPage(router, deps, assets);
  registerSession(router, deps);
  if (deps.vault) registerVault(router, deps, deps.vault);
}

/** The page's script and stylesheet. */
function registerAssets(router: ApiRouter, assets: CheckoutAssets): void {
  router.get('/checkout/assets/:file', (ctx) => {
    const file = assets.files.get(ctx.params.file ?? '');
    if (!file) throw notFound('Asset');
    ctx.type = file.type;
    // Named by content hash in the page: a new deploy is a new URL.
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.body = file.body;
  });
}

/** What the Payment id alone shows: the page, its status poll and the QR code. */
function registerPage(router: ApiRouter, deps: CheckoutRouteDeps, assets: CheckoutAssets): void {
  router.get('/checkout/:paymentId', async (ctx) => {
    const { paymentId } = parseInput(ZPaymentPath, ctx.params, 'path');
    const now = new Date();
    const page = await loadPage(deps, paymentId, now);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = renderCheckoutPage(page, assets.urls, now);
  });

  // Polled every 2 s by the page; the ETag covers the whole answer (amounts move without statusVersion).
  router.get('/checkout/:paymentId/status', async (ctx) => {
    const { paymentId } = parseInput(ZPaymentPath, ctx.params, 'path');
    const page = await loadPage(deps, paymentId, new Date());
    const body = JSON.stringify({ ...page.status, ...phaseText(page) });
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    ctx.set('ETag', etag);
    if (ctx.get('If-None-Match') === etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = 'application/json';
    ctx.body = body;
  });

  // The QR code of what is payable now (the query only names the amount for the browser's sake).
  router.get('/checkout/:paymentId/qr.svg', async (ctx) => {
    const { paymentId } = parseInput(ZPaymentPath, ctx.params, 'path');
    const { payable } = (await loadPage(deps, paymentId, new Date())).status;
    if (!payable) throw new ApiError('payment_not_open', 'Nothing is payable on this Payment now');
    ctx.type = 'image/svg+xml';
    ctx.body = await qrSvg(payable.uri);
  });
}

/** The partner's front end posts the payer's client token and the payment secret here (never in a URL). */
function registerSession(router: ApiRouter, deps: CheckoutRouteDeps): void {
  router.post('/checkout/:paymentId/session', async (ctx) => {
    const { paymentId } = parseInput(ZPaymentPath, ctx.params, 'path');
    const input = parseInput(ZCheckoutSessionRequest, await formOrJson(ctx, deps.maxBodyBytes), 'body');
    const opened = await openCheckoutSession(deps, paymentId, input);
    const cookie = checkoutCookie(deps.publicBaseUrl, paymentId);
    // Written by hand: Koa's cookies refuse Secure on a plain-HTTP hop (TLS ends at the proxy).
    const attrs = [
      `Path=${cookie.path}`,
      `Max-Age=${opened.maxAgeSeconds}`,
      'HttpOnly',
      'SameSite=Strict',
      ...(cookie.secure ? ['Secure'] : []),
    ];
    ctx.append('Set-Cookie', `${cookie.name}=${opened.sealed}; ${attrs.join('; ')}`);
    ctx.status = 303;
    ctx.redirect(`/checkout/${paymentId}`);
  });
}

/** The Vault option: the payer's vault for this Payment, and paying from it; both need the session. */
function registerVault(router: ApiRouter, deps: CheckoutRouteDeps, vault: NonNullable<CheckoutRouteDeps['vault']>): void {
  const vaultDeps = { prisma: deps.prisma, serviceSecret: deps.serviceSecret, environments: deps.environments, ...vault };

  router.get('/checkout/:paymentId/vault', async (ctx) => {
    const { paymentId } = parseInput(ZPaymentPath, ctx.params, 'path');
    const s = await requireSession(deps, ctx, paymentId);
    ctx.body = await checkoutVault(vaultDeps, s.principal, paymentId, s.csrf);
  });

  router.post('/checkout/:paymentId/vault/authorize', async (ctx) => {
    const { paymentId } = parseInput(ZPaymentPath, ctx.params, 'path');
    const s = await requireSession(deps, ctx, paymentId);
    assertCsrf(s, ctx.get('X-CSRF-Token') || undefined);
    ctx.body = await payFromVault(vaultDeps, s.principal, paymentId, s.csrf);
  });
}

/** What the page shows of a Payment, its network named as the environments file names it. */
async function loadPage(deps: CheckoutRouteDeps, paymentId: string, now: Date): Promise<TCheckoutPage> {
  const p = await deps.prisma.payment.findUnique({ where: { id: paymentId } });
  // A revoked app's Payments are not shown to payers (its client tokens are refused too).
  const app = p && (await deps.prisma.app.findUnique({ where: { id: p.appId }, select: { revokedAt: true } }));
  if (!p || !app || app.revokedAt) throw notFound('Payment');
  const network = Object.values(deps.environments.environments)
    .flatMap((env) => env.networks)
    .find((n) => n.chainId === p.chainId);
  const finality = await finalityOfOne(deps, { kind: 'payment', id: p.id }, now);
  return toCheckoutPage(p, { name: network?.name ?? network?.code ?? `Chain ${p.chainId}` }, now, finality);
}

/** The payer's session of this Payment, from its cookie: unauthorized without one. */
async function requireSession(deps: CheckoutRouteDeps, ctx: ApiContext, paymentId: string): Promise<CheckoutSession> {
  const found = await readCheckoutSession(deps, paymentId, ctx.cookies.get(checkoutCookie(deps.publicBaseUrl, paymentId).name));
  if (!found)
    throw new ApiError(
      'unauthorized',
      'No checkout session for this Payment: POST the client token and payment secret to /checkout/{paymentId}/session',
    );
  return found;
}
