import type { PrismaClient } from '../../db/client';

export class NotSandboxError extends Error {}

/**
 * The sandbox outbox of an account: the approval mails the service would have sent had SMTP been
 * configured, newest first, with the code read out for the operator. Refuses any account that is not
 * of a sandbox app (production never writes the outbox, and must never read it).
 */
export async function sandboxVaultCodes(prisma: PrismaClient, accountId: string, limit: number) {
  const account = await prisma.account.findUnique({ where: { id: accountId }, select: { appId: true } });
  if (!account) throw new NotSandboxError(`account ${accountId} not found`);
  const app = await prisma.app.findUniqueOrThrow({ where: { id: account.appId }, select: { environment: true } });
  if (app.environment !== 'sandbox')
    throw new NotSandboxError(`account ${accountId} is not a sandbox account: vault codes are readable only in the sandbox`);
  const mails = await prisma.sandboxMail.findMany({ where: { accountId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: limit });
  return {
    accountId,
    mails: mails.map((m) => ({
      to: m.toAddress,
      subject: m.subject,
      code: /\bis (\d{6})\b/.exec(m.body)?.[1] ?? null,
      sentAt: m.createdAt.toISOString(),
    })),
  };
}
