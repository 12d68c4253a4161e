-- Operators as named people (src/domain/operators/operator-accounts.ts): their admin API tokens, their
-- emailed console sign-in codes; console sessions now belong to an operator, not to the admin token.
CREATE TABLE "operators" (
    "id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "totp_sealed" TEXT NOT NULL,
    "totp_last_step" BIGINT,
    "disabled_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "operators_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "operators_role_known" CHECK ("role" IN ('viewer', 'operator', 'approver', 'admin'))
);
CREATE UNIQUE INDEX "operators_email_key" ON "operators"("email");

CREATE TABLE "operator_tokens" (
    "id" TEXT NOT NULL,
    "operator_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "revoked_at" TIMESTAMPTZ(3),
    "last_used_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "operator_tokens_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "operator_tokens_token_hash_key" ON "operator_tokens"("token_hash");
CREATE INDEX "operator_tokens_operator_id_idx" ON "operator_tokens"("operator_id");
ALTER TABLE "operator_tokens" ADD CONSTRAINT "operator_tokens_operator_id_fkey" FOREIGN KEY ("operator_id") REFERENCES "operators"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "operator_sign_in_codes" (
    "id" TEXT NOT NULL,
    "operator_id" TEXT NOT NULL,
    "code_hash" TEXT NOT NULL,
    "outbox_code" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "operator_sign_in_codes_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "operator_sign_in_codes_operator_id_created_at_idx" ON "operator_sign_in_codes"("operator_id", "created_at");

-- Sessions opened under the shared admin token have no operator: they end here (kept for the record).
UPDATE "console_sessions" SET "ended_at" = CURRENT_TIMESTAMP WHERE "ended_at" IS NULL;
ALTER TABLE "console_sessions" DROP COLUMN "token_hash", ADD COLUMN "operator_id" TEXT;
ALTER TABLE "console_sessions" ALTER COLUMN "actor" DROP NOT NULL;

-- Every admin API write is in the one audit: webhook endpoints and dashboard users name themselves.
ALTER TABLE "operator_actions" DROP CONSTRAINT "operator_actions_action_known";
ALTER TABLE "operator_actions" ADD CONSTRAINT "operator_actions_action_known"
    CHECK ("action" IN ('retry', 'mark-settled', 'fail', 'recover-incident', 'rotate-secret', 'revoke',
        'create-webhook-endpoint', 'update-webhook-endpoint', 'disable-webhook-endpoint', 'enable-webhook-endpoint',
        'archive-webhook-endpoint', 'rotate-webhook-secret', 'redeliver-webhook', 'recover-webhook-endpoint',
        'invite-dashboard-user', 'remove-dashboard-user'));
ALTER TABLE "operator_actions" DROP CONSTRAINT "operator_actions_outcome_known";
ALTER TABLE "operator_actions" ADD CONSTRAINT "operator_actions_outcome_known"
    CHECK ("outcome" IN ('signalled', 'created', 'applied', 'refused', 'failed'));
