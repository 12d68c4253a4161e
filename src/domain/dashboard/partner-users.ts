import { z } from 'zod';
import type { PrismaClient } from '../../db/client';
import { ApiError, notFound } from '../requests/errors';
import { newId } from '../values/ids';
import { parseInput } from '../requests/validation';
import { recordPartnerAction } from './partner-actions';

/**
 * Who of a partner may use the dashboard of which app, and as what. Operators invite (console, CLI,
 * admin API); a membership is one email on one app, so one person may hold several apps.
 *
 *   viewer     reads every page
 *   developer  also manages webhook endpoints: create, edit, disable, archive, rotate, test, resend, recover
 *   admin      also rotates and revokes the app's secret
 */
export const PARTNER_ROLES = ['admin', 'developer', 'viewer'] as const;
export type PartnerRole = (typeof PARTNER_ROLES)[number];

export type PartnerPermission = 'read' | 'manage_webhooks' | 'manage_credentials';
const GRANTS: Record<PartnerRole, readonly PartnerPermission[]> = {
  viewer: ['read'],
  developer: ['read', 'manage_webhooks'],
  admin: ['read', 'manage_webhooks', 'manage_credentials'],
};

export function roleAllows(role: PartnerRole, permission: PartnerPermission): boolean {
  return GRANTS[role].includes(permission);
}

export const ZPartnerEmail = z
  .string()
  .trim()
  .toLowerCase()
  .max(254)
  .regex(/^[^\s@<>()",;:]+@[^\s@<>()",;:]+\.[^\s@<>()",;:]+$/, 'an email address');

export const ZPartnerUserId = z
  .string()
  .regex(/^puser_[A-Za-z0-9]+$/, 'a partner user id (puser_...)')
  .max(64);

export const ZInvitePartnerUser = z.strictObject({
  email: ZPartnerEmail,
  role: z.enum(PARTNER_ROLES),
  actor: z.string().trim().min(1).max(200),
});

export interface PartnerUserView {
  id: string;
  appId: string;
  email: string;
  role: PartnerRole;
  invitedBy: string;
  createdAt: string;
}

type UserRow = { id: string; appId: string; email: string; role: string; invitedBy: string; createdAt: Date };

export function toPartnerUser(row: UserRow): PartnerUserView {
  return {
    id: row.id,
    appId: row.appId,
    email: row.email,
    role: row.role as PartnerRole,
    invitedBy: row.invitedBy,
    createdAt: row.createdAt.toISOString(),
  };
}

/** Invites an email to an app's dashboard, or changes the role of one already there (and restores a removed one). */
export async function invitePartnerUser(prisma: PrismaClient, appId: string, rawInput: unknown): Promise<{ user: PartnerUserView }> {
  const input = parseInput(ZInvitePartnerUser, rawInput ?? {}, 'body');
  if (!(await prisma.app.findUnique({ where: { id: appId }, select: { id: true } }))) throw notFound('App');
  return prisma.$transaction(async (tx) => {
    const row = await tx.partnerUser.upsert({
      where: { appId_email: { appId, email: input.email } },
      create: { id: newId('partnerUser'), appId, email: input.email, role: input.role, invitedBy: input.actor },
      update: { role: input.role, invitedBy: input.actor, removedAt: null },
    });
    await recordPartnerAction(tx, { appId, actor: `operator:${input.actor}`, action: `user.invited:${input.role}`, target: input.email });
    return { user: toPartnerUser(row) };
  });
}

export async function listPartnerUsers(prisma: PrismaClient, appId: string): Promise<{ items: PartnerUserView[] }> {
  const rows = await prisma.partnerUser.findMany({ where: { appId, removedAt: null }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  return { items: rows.map(toPartnerUser) };
}

/** Removes a membership; its sessions end with it (they are checked against it on every request). */
export async function removePartnerUser(
  prisma: PrismaClient,
  appId: string,
  userId: string,
  actor: string,
): Promise<{ user: PartnerUserView }> {
  const who = parseInput(z.object({ actor: z.string().trim().min(1).max(200) }), { actor }, 'body').actor;
  return prisma.$transaction(async (tx) => {
    const row = await tx.partnerUser.findFirst({ where: { id: userId, appId, removedAt: null } });
    if (!row) throw notFound('Partner user');
    const removed = await tx.partnerUser.update({ where: { id: row.id }, data: { removedAt: new Date() } });
    await tx.partnerSession.updateMany({ where: { userId: row.id, endedAt: null }, data: { endedAt: new Date() } });
    await recordPartnerAction(tx, { appId, actor: `operator:${who}`, action: 'user.removed', target: row.email });
    return { user: toPartnerUser(removed) };
  });
}

/** The live memberships of an email, newest first. */
export async function membershipsOf(prisma: PrismaClient, email: string) {
  return prisma.partnerUser.findMany({ where: { email, removedAt: null }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
}

export function forbiddenFor(role: PartnerRole): ApiError {
  return new ApiError('forbidden', `Your role (${role}) can't do this: ask an admin of your team.`);
}
