import type { PrismaClient } from '../../db/client';

// The payer of a receive Payment on the client API: the first account whose client token read it
// (the spec: "The Payment must belong to the account fixed by the bearer token"). The recipient is
// never its own payer. The binding is one row per Payment, claimed by an insert that does nothing on
// conflict: of accounts racing for an unbound Payment exactly one wins, and every reader then sees it.

/** A receive Payment, as far as its binding is concerned. */
interface Payable {
  id: string;
  recipientAccountId: string;
}

async function boundPayer(prisma: PrismaClient, paymentId: string): Promise<string | null> {
  return (await prisma.paymentPayer.findUnique({ where: { paymentId } }))?.accountId ?? null;
}

/** True when the account is (now) the Payment's payer: already bound to it, or it won the claim. */
export async function claimPayer(prisma: PrismaClient, payment: Payable, accountId: string): Promise<boolean> {
  if (accountId === payment.recipientAccountId) return false;
  const bound = await boundPayer(prisma, payment.id);
  if (bound) return bound === accountId;
  // A separate statement reads the winner: the insert's own snapshot may not see a concurrent one's row.
  await prisma.paymentPayer.createMany({ data: [{ paymentId: payment.id, accountId }], skipDuplicates: true });
  return (await boundPayer(prisma, payment.id)) === accountId;
}

/** True when the account is the Payment's bound payer; binds no one (for the calls that spend an action). */
export async function isPayer(prisma: PrismaClient, payment: Payable, accountId: string): Promise<boolean> {
  return accountId !== payment.recipientAccountId && (await boundPayer(prisma, payment.id)) === accountId;
}
