-- Client API: a receive Payment binds to its first payer (docs/decisions.md "Client API binding, quote
-- expiry and idempotency of refused requests"). One row per Payment; the primary key makes the first
-- insert win a race.
CREATE TABLE "payment_payers" (
    "payment_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "bound_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "payment_payers_pkey" PRIMARY KEY ("payment_id"),
    CONSTRAINT "payment_payers_payment_id_fkey" FOREIGN KEY ("payment_id") REFERENCES "payments"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "payment_payers_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE
);

-- Payments some account already acted on before this migration: the account first issued an action
-- (its first read) is the payer, as it would have been bound then. The recipient never is.
INSERT INTO "payment_payers" ("payment_id", "account_id", "bound_at")
SELECT DISTINCT ON (a."payment_id") a."payment_id", a."account_id", a."created_at"
  FROM "payment_actions" a
  JOIN "payments" p ON p."id" = a."payment_id"
 WHERE a."account_id" <> p."recipient_account_id"
 ORDER BY a."payment_id", a."created_at", a."id";
