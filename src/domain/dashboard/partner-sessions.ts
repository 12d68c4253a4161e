import type { PrismaClient } from '../../db/client';
import { newId } from '../values/ids';
import type { PartnerRole } from './partner-users';

/**
 * Partner dashboard sessions, server-side like the console's: sign-out, an operator removing the
 * membership, or expiry ends a session for every copy of its cookie.
 */
export interface PartnerSessionUser {
  sessionId: string;
  userId: string;
  appId: string;
  email: string;
  role: PartnerRole;
  environment: string;
}

export interface PartnerSessionStore {
  open(userId: string, expiresAt: Date): Promise<string>;
  /** The live session's member, or null when ended, expired or its membership removed. */
  live(id: string, now?: Date): Promise<PartnerSessionUser | null>;
  end(id: string): Promise<void>;
}

export function partnerSessionStore(prisma: PrismaClient): PartnerSessionStore {
  return {
    async open(userId, expiresAt) {
      const id = newId('partnerSession');
      await prisma.partnerSession.deleteMany({ where: { expiresAt: { lt: new Date(Date.now() - 24 * 3600 * 1000) } } });
      await prisma.partnerSession.create({ data: { id, userId, expiresAt } });
      return id;
    },
    async live(id, now = new Date()) {
      if (id.length > 64) return null;
      const session = await prisma.partnerSession.findUnique({ where: { id } });
      if (!session || session.endedAt !== null || session.expiresAt <= now) return null;
      const user = await prisma.partnerUser.findUnique({ where: { id: session.userId } });
      if (!user || user.removedAt !== null) return null;
      const app = await prisma.app.findUnique({ where: { id: user.appId }, select: { environment: true } });
      if (!app) return null;
      return {
        sessionId: id,
        userId: user.id,
        appId: user.appId,
        email: user.email,
        role: user.role as PartnerRole,
        environment: app.environment,
      };
    },
    async end(id) {
      await prisma.partnerSession.updateMany({ where: { id, endedAt: null }, data: { endedAt: new Date() } });
    },
  };
}
