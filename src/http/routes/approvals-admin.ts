import type Koa from 'koa';
import { z } from 'zod';
import { approveRequest, listApprovals, rejectRequest, type ApprovalDeps } from '../../domain/operators/operator-approvals';
import { parseInput } from '../../domain/requests/validation';
import { requireOperator, type ApiState } from '../context';
import { mountRouter } from '../mount-router';
import { adminRouter, type AdminRouteDeps } from '../admin-router';
import { requireRole } from '../middleware/admin-auth';

/**
 * Two-person approvals over the admin API (src/domain/operators/operator-approvals.ts):
 *
 *   GET  /admin/v1/approvals?status=pending|all          {items}, newest first (pending: not yet expired)
 *   POST /admin/v1/approvals/{approvalId}/approve       {}          200 {approval, result}: carried out
 *   POST /admin/v1/approvals/{approvalId}/reject        {reason?}   200 {approval}
 *
 * Any operator reads; deciding needs the approver role, and never the requester's own request (403).
 */
const ZList = z.strictObject({ status: z.enum(['pending', 'all']).default('pending') });
const ZReject = z.strictObject({ reason: z.string().trim().min(1).max(500).optional() });

export function registerApprovalAdminRoutes(app: Koa<ApiState>, deps: AdminRouteDeps & ApprovalDeps): void {
  const router = adminRouter('/admin/v1/approvals', deps, 'viewer');
  router.get('/', async (ctx) => {
    const { status } = parseInput(ZList, ctx.query, 'query');
    ctx.body = await listApprovals(deps.prisma, { pendingOnly: status === 'pending' });
  });
  router.post('/:approvalId/approve', requireRole('approver'), async (ctx) => {
    parseInput(z.strictObject({}), ctx.state.body ?? {}, 'body');
    ctx.body = await approveRequest(deps, { operator: requireOperator(ctx), channel: 'admin_api' }, String(ctx.params.approvalId));
  });
  router.post('/:approvalId/reject', requireRole('approver'), async (ctx) => {
    const { reason } = parseInput(ZReject, ctx.state.body ?? {}, 'body');
    ctx.body = await rejectRequest(deps, { operator: requireOperator(ctx), channel: 'admin_api' }, String(ctx.params.approvalId), reason);
  });
  mountRouter(app, router);
}
