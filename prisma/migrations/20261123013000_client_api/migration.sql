-- Client API (docs/decisions.md "Client API").
-- Revocation of client access tokens: a token carries its account's generation when issued; a revoke
-- increments it, so every earlier token of the account is refused. No row means generation 0.
CREATE TABLE "client_token_generations" (
    "account_id" TEXT NOT NULL,
    "generation" INTEGER NOT NULL,
    "revoked_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "client_token_generations_pkey" PRIMARY KEY ("account_id"),
    CONSTRAINT "client_token_generations_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE
);

-- Action ids issued in payment options (option.execution.actionId): bound to one Payment, option and
-- payer account, single use (used_at is set once, by a conditional update).
CREATE TABLE "payment_actions" (
    "id" TEXT NOT NULL,
    "payment_id" TEXT NOT NULL,
    "option_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "proof_type" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),
    "proof" JSONB,
    "metadata" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "payment_actions_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "payment_actions_payment_id_fkey" FOREIGN KEY ("payment_id") REFERENCES "payments"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "payment_actions_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE
);
CREATE INDEX "payment_actions_payment_id_account_id_option_id_idx" ON "payment_actions"("payment_id", "account_id", "option_id");
