-- Vaults: one policy-controlled vault per account at a custody-derived address, its policies, emailed
-- approval codes (hashed), its audit trail, funding operations, and the sandbox mail outbox.
CREATE TABLE "vaults" (
    "id" TEXT NOT NULL,
    "app_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "network_code" TEXT NOT NULL,
    "custody_index" SERIAL NOT NULL,
    "address" TEXT,
    "status" TEXT NOT NULL,
    "active_policy_id" TEXT,
    "period_anchor_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "vaults_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "vaults_account_id_key" ON "vaults"("account_id");
CREATE UNIQUE INDEX "vaults_custody_index_key" ON "vaults"("custody_index");
CREATE UNIQUE INDEX "vaults_address_key" ON "vaults"("address");

CREATE TABLE "vault_policies" (
    "id" TEXT NOT NULL,
    "vault_id" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "spend_limit_atomic" DECIMAL(78,0) NOT NULL,
    "spend_limit_decimals" INTEGER NOT NULL,
    "period" TEXT NOT NULL,
    "allowed_tokens" JSONB NOT NULL,
    "approval_method" TEXT NOT NULL,
    "approval_email" TEXT NOT NULL,
    "activated_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "vault_policies_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "vault_policies_status_known" CHECK ("status" IN ('pending_approval', 'active', 'superseded')),
    CONSTRAINT "vault_policies_spend_limit_positive" CHECK ("spend_limit_atomic" > 0)
);
CREATE UNIQUE INDEX "vault_policies_vault_id_version_key" ON "vault_policies"("vault_id", "version");
ALTER TABLE "vault_policies" ADD CONSTRAINT "vault_policies_vault_id_fkey" FOREIGN KEY ("vault_id") REFERENCES "vaults"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "vault_approval_codes" (
    "id" TEXT NOT NULL,
    "policy_id" TEXT NOT NULL,
    "code_hash" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "consumed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "vault_approval_codes_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "vault_approval_codes_policy_id_created_at_idx" ON "vault_approval_codes"("policy_id", "created_at");
ALTER TABLE "vault_approval_codes" ADD CONSTRAINT "vault_approval_codes_policy_id_fkey" FOREIGN KEY ("policy_id") REFERENCES "vault_policies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "vault_audit_events" (
    "id" TEXT NOT NULL,
    "vault_id" TEXT NOT NULL,
    "policy_id" TEXT,
    "event_type" TEXT NOT NULL,
    "actor_type" TEXT NOT NULL,
    "actor_id" TEXT,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "vault_audit_events_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "vault_audit_events_vault_id_created_at_id_idx" ON "vault_audit_events"("vault_id", "created_at", "id");
ALTER TABLE "vault_audit_events" ADD CONSTRAINT "vault_audit_events_vault_id_fkey" FOREIGN KEY ("vault_id") REFERENCES "vaults"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "vault_funding_operations" (
    "id" TEXT NOT NULL,
    "vault_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "payment_id" TEXT NOT NULL,
    "option_id" TEXT,
    "status" TEXT NOT NULL,
    "status_version" INTEGER NOT NULL,
    "commercial_fee_mode" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "token_address" TEXT NOT NULL,
    "amount_atomic" DECIMAL(78,0) NOT NULL,
    "to_address" TEXT NOT NULL,
    "period_start" TIMESTAMPTZ(3) NOT NULL,
    "transaction_hash" TEXT,
    "failure_reason" TEXT,
    "authorized_at" TIMESTAMPTZ(3) NOT NULL,
    "broadcast_at" TIMESTAMPTZ(3),
    "confirmed_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "vault_funding_operations_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "vault_funding_operations_status_known" CHECK ("status" IN ('authorized', 'broadcast', 'confirmed', 'failed')),
    CONSTRAINT "vault_funding_operations_amount_positive" CHECK ("amount_atomic" > 0)
);
CREATE INDEX "vault_funding_operations_vault_id_period_start_idx" ON "vault_funding_operations"("vault_id", "period_start");
CREATE INDEX "vault_funding_operations_payment_id_idx" ON "vault_funding_operations"("payment_id");
ALTER TABLE "vault_funding_operations" ADD CONSTRAINT "vault_funding_operations_vault_id_fkey" FOREIGN KEY ("vault_id") REFERENCES "vaults"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "sandbox_mail_outbox" (
    "id" TEXT NOT NULL,
    "app_id" TEXT NOT NULL,
    "account_id" TEXT,
    "to_address" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "sandbox_mail_outbox_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "sandbox_mail_outbox_account_id_created_at_idx" ON "sandbox_mail_outbox"("account_id", "created_at");
