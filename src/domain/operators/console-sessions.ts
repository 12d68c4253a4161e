import type { PrismaClient } from '../../db/client';
import { newId } from '../values/ids';
import { activeOperatorById, type SignedInOperator } from './operator-accounts';

/**
 * Operator console sessions, held in PostgreSQL so that they end on the server: a logout ends the
 * session for every copy of its cookie, and disabling the operator ends all of theirs.
 */
export interface ConsoleSessionStore {
  open(operatorId: string, expiresAt: Date): Promise<string>;
  /** The session's operator while it is live: not ended, not expired, its operator not disabled. */
  operatorOf(id: string, now?: Date): Promise<SignedInOperator | null>;
  end(id: string): Promise<void>;
}

export function consoleSessionStore(prisma: PrismaClient): ConsoleSessionStore {
  return {
    async open(operatorId, expiresAt) {
      const id = newId('consoleSession');
      // Sessions long over are of no use to anyone: forget them as new ones open.
      await prisma.consoleSession.deleteMany({ where: { expiresAt: { lt: new Date(Date.now() - 24 * 3600 * 1000) } } });
      await prisma.consoleSession.create({ data: { id, operatorId, expiresAt } });
      return id;
    },
    async operatorOf(id, now = new Date()) {
      if (id.length > 64) return null;
      const row = await prisma.consoleSession.findUnique({ where: { id } });
      if (!row || row.endedAt !== null || row.expiresAt <= now || !row.operatorId) return null;
      return activeOperatorById(prisma, row.operatorId);
    },
    async end(id) {
      await prisma.consoleSession.updateMany({ where: { id, endedAt: null }, data: { endedAt: new Date() } });
    },
  };
}
