import type { PrismaClient } from '../../db/client';
import { newId } from '../values/ids';
import { safeEqual, sha256Hex } from '../../platform/secrets';

/**
 * Operator console sessions, held in PostgreSQL so that they end on the server: a logout ends the
 * session for every copy of its cookie, and a session opened under one admin token is refused once
 * ADMIN_API_TOKEN is another (only a hash of the token is stored, as for app secrets).
 */
export interface ConsoleSessionStore {
  open(actor: string, expiresAt: Date): Promise<string>;
  /** Whether the session is live: not ended, not expired, opened under the current admin token. */
  isLive(id: string, now?: Date): Promise<boolean>;
  end(id: string): Promise<void>;
}

const tokenHash = (adminToken: string) => sha256Hex(`console-session-token:${adminToken}`);

export function consoleSessionStore(prisma: PrismaClient, adminToken: string): ConsoleSessionStore {
  const current = tokenHash(adminToken);
  return {
    async open(actor, expiresAt) {
      const id = newId('consoleSession');
      // Sessions long over are of no use to anyone: forget them as new ones open.
      await prisma.consoleSession.deleteMany({ where: { expiresAt: { lt: new Date(Date.now() - 24 * 3600 * 1000) } } });
      await prisma.consoleSession.create({ data: { id, actor, tokenHash: current, expiresAt } });
      return id;
    },
    async isLive(id, now = new Date()) {
      if (id.length > 64) return false;
      const row = await prisma.consoleSession.findUnique({ where: { id } });
      return row !== null && row.endedAt === null && row.expiresAt > now && safeEqual(row.tokenHash, current);
    },
    async end(id) {
      await prisma.consoleSession.updateMany({ where: { id, endedAt: null }, data: { endedAt: new Date() } });
    },
  };
}
