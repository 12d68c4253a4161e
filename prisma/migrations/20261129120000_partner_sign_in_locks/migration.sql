-- The running total of wrong dashboard sign-in codes per email (src/domain/dashboard/sign-in.ts):
-- at the limit the email is locked until an operator unlocks it; a sign-in resets the total.
CREATE TABLE "partner_sign_in_locks" (
    "email" TEXT NOT NULL,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "locked_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "partner_sign_in_locks_pkey" PRIMARY KEY ("email"),
    CONSTRAINT "partner_sign_in_locks_failures_not_negative" CHECK ("failures" >= 0)
);
