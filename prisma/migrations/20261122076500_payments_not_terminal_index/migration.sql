-- The orphan Payment reconciler pages through the Payments that are not terminal by id, every minute:
-- a partial index keeps that a walk over the few open ones, not over every Payment ever made. Prisma's
-- schema language can't express a partial index, so it lives here only.
CREATE INDEX "payments_not_terminal_id_idx" ON "payments"("id")
    WHERE "status" NOT IN ('succeeded', 'failed', 'cancelled', 'expired');
