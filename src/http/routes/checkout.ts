import type Router from '@koa/router';
import { z } from 'zod';
import type { PrismaClient } from '../../db/client';
import { ZPaymentId } from '../../domain/payments/payment.schemas';
import { toNextAction } from '../../domain/payments/payment-view';
import { formatAtomic } from '../../domain/amounts';
import type { ApiState } from '../context';
import { notFound } from '../../domain/errors';
import { parseInput } from '../../domain/validation';

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The hosted checkout behind checkout.paymentUrl: what to pay, where, until when. The URL holds an
 * unguessable Payment id; the page shows nothing a payer must not see (no secrets, no metadata).
 */
export function registerCheckoutRoutes(router: Router<ApiState>, deps: { prisma: PrismaClient }): void {
  router.get('/checkout/:paymentId', async (ctx) => {
    const { paymentId } = parseInput(z.object({ paymentId: ZPaymentId }), ctx.params, 'path');
    const p = await deps.prisma.payment.findUnique({ where: { id: paymentId }, include: { incidents: true } });
    if (!p) throw notFound('Payment');
    const action = toNextAction(p);
    const amount = `${formatAtomic(p.amountAtomic.toString(), p.decimals)} ${p.assetCode}`;
    const body = action?.type === 'none' && p.status === 'processing'
      ? `<p>Payment seen: waiting for the network to confirm it. Nothing more to send.</p>`
      : action?.type === 'transaction'
      ? `<p>Send exactly <strong>${escape(action.depositInstructions.amount)} ${escape(p.assetCode)}</strong> on chain ${p.chainId} to</p>
<pre>${escape(action.depositInstructions.address)}</pre>
<p>Token contract: <code>${escape(p.tokenAddress)}</code>. This request expires at ${escape(action.expiresAt)}.</p>`
      : `<p>Status: <strong>${escape(p.status)}</strong>. Nothing to pay now.</p>`;
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'");
    ctx.body = `<!doctype html><html><head><meta charset="utf-8"><title>Pay ${escape(amount)}</title></head>
<body style="font-family:sans-serif;max-width:40em;margin:2em auto">
<h1>${escape(p.recipientDisplayName ?? 'Payment')}: ${escape(amount)}</h1>
${p.description ? `<p>${escape(p.description)}</p>` : ''}${body}
${p.returnUrl ? `<p><a href="${escape(p.returnUrl)}">Return to the merchant</a></p>` : ''}
</body></html>`;
  });
}
