import type Router from '@koa/router';
import { z } from 'zod';
import { ApiError } from '../../domain/requests/errors';
import {
  approveRequest,
  listApprovals,
  rejectRequest,
  type ApprovalDeps,
  type ApprovalView,
} from '../../domain/operators/operator-approvals';
import { hasRole, type OperatorRole } from '../../domain/operators/pure/operator-roles';
import type { ApiContext, ApiState } from '../context';
import { Html, html } from '../html';
import { problemOf } from '../html-area';
import type { ConsoleSession } from './console-session';

type State = ApiState & { session?: ConsoleSession };
type Ctx = ApiContext & { state: State };
type Next = () => Promise<unknown>;

/** What the approvals pages borrow from the console: its guards, its form reader and its page. */
export interface ApprovalPageDeps extends ApprovalDeps {
  signedIn: (ctx: Ctx, next: Next) => Promise<unknown>;
  may: (role: OperatorRole) => (ctx: Ctx, next: Next) => Promise<unknown>;
  form: <T extends z.ZodType>(ctx: Ctx, schema: T) => Promise<z.output<T>>;
  send: (ctx: Ctx, status: number, title: string, body: Html) => void;
}

const ZDecision = z.object({ _csrf: z.string().min(1).max(200), reason: z.string().trim().max(500).optional() });
const ZApprovalPath = z.object({
  id: z
    .string()
    .regex(/^approval_[A-Za-z0-9]+$/)
    .max(64),
});

function requestRow(a: ApprovalView, csrf: string, decide: boolean): Html {
  const params = Object.entries(a.params).map(([k, v]) => html`<span class="mono">${k}=${v}</span> `);
  const forms = decide
    ? html`<form method="post" action="/console/approvals/${a.id}/approve" class="inline"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit">Approve ${a.id}</button></form>
<form method="post" action="/console/approvals/${a.id}/reject" class="inline"><input type="hidden" name="_csrf" value="${csrf}"><label for="why-${a.id}">Why reject</label> <input id="why-${a.id}" name="reason" type="text" maxlength="500"> <button type="submit">Reject ${a.id}</button></form>`
    : html`<span>Another approver decides</span>`;
  return html`<tr data-id="${a.id}"><td class="mono">${a.id}</td><td>${a.action} ${a.target.type} <span class="mono">${a.target.id}</span> ${params}</td><td>${a.reason}</td><td>${a.requestedBy}</td><td><time>${a.expiresAt}</time></td><td>${forms}</td></tr>`;
}

function approvalsPage(items: ApprovalView[], session: ConsoleSession, flash: { notice?: string; error?: string }): Html {
  const approver = hasRole(session.operator.role, 'approver');
  return html`<h1>Approvals</h1>
<p>Money moved by an operator anywhere automation would not goes only after a second operator, with the approver role, approves it here, within 4 hours.</p>
${flash.notice ? html`<p class="notice" role="status">${flash.notice}</p>` : ''}${flash.error ? html`<p class="error" role="alert">${flash.error}</p>` : ''}
${
  items.length === 0
    ? html`<p>No request is waiting.</p>`
    : html`<table><thead><tr><th scope="col">Request</th><th scope="col">What</th><th scope="col">Why</th><th scope="col">Asked by</th><th scope="col">Expires</th><th scope="col">Decide</th></tr></thead><tbody>
${items.map((a) => requestRow(a, session.csrf, approver && a.requestedBy !== session.operator.email))}
</tbody></table>`
}`;
}

/**
 *   GET  /console/approvals                     the pending requests, newest first
 *   POST /console/approvals/{approvalId}/approve   an approver who did not ask: carried out at once
 *   POST /console/approvals/{approvalId}/reject    with an optional reason
 */
export function registerApprovalPages(router: Router<State>, deps: ApprovalPageDeps): void {
  const page = async (ctx: Ctx, flash: { notice?: string; error?: string }, status = 200) => {
    const { items } = await listApprovals(deps.prisma, { pendingOnly: true });
    deps.send(ctx, status, 'Approvals', approvalsPage(items, ctx.state.session!, flash));
  };
  router.get('/approvals', deps.signedIn, async (ctx) => {
    const done = ctx.query.done;
    await page(ctx, done === 'approved' ? { notice: 'Approved and carried out.' } : done === 'rejected' ? { notice: 'Rejected.' } : {});
  });
  for (const verdict of ['approve', 'reject'] as const) {
    router.post(`/approvals/:id/${verdict}`, deps.signedIn, deps.may('approver'), async (ctx) => {
      const { id } = z.object({ id: z.string() }).parse(ctx.params);
      const input = await deps.form(ctx, ZDecision);
      if (!ZApprovalPath.safeParse({ id }).success) throw new ApiError('not_found', 'Approval not found');
      const who = { operator: ctx.state.session!.operator, channel: 'console' as const };
      try {
        if (verdict === 'approve') await approveRequest(deps, who, id);
        else await rejectRequest(deps, who, id, input.reason || undefined);
      } catch (err) {
        if (!(err instanceof ApiError) || err.status >= 500) throw err;
        return page(ctx, { error: problemOf(err) }, err.status);
      }
      ctx.status = 303;
      ctx.redirect(`/console/approvals?done=${verdict === 'approve' ? 'approved' : 'rejected'}`);
    });
  }
}
