-- Linked bank accounts: payout destinations of an account (src/domain/bank-accounts).
CREATE TABLE "bank_accounts" (
    "id" TEXT NOT NULL,
    "app_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "country" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "account_holder_name" TEXT NOT NULL,
    "beneficiary_type" TEXT NOT NULL,
    "bank_name" TEXT NOT NULL,
    "bank_code" TEXT NOT NULL,
    "details" JSONB NOT NULL,
    "account_number_encrypted" TEXT NOT NULL,
    "account_number_last4" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "rail" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "status_version" INTEGER NOT NULL DEFAULT 1,
    "verification_version" INTEGER NOT NULL DEFAULT 1,
    "verified_at" TIMESTAMPTZ(3),
    "disabled_at" TIMESTAMPTZ(3),
    "failure_reason" TEXT,
    "provider_code" TEXT NOT NULL,
    "provider_account_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "bank_accounts_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "bank_accounts_status_known" CHECK ("status" IN ('pending_verification', 'verified', 'verification_failed', 'disabled'))
);
CREATE UNIQUE INDEX "bank_accounts_provider_account_id_key" ON "bank_accounts"("provider_account_id");
CREATE UNIQUE INDEX "bank_accounts_account_id_fingerprint_key" ON "bank_accounts"("account_id", "fingerprint");
CREATE INDEX "bank_accounts_account_id_created_at_id_idx" ON "bank_accounts"("account_id", "created_at", "id");
ALTER TABLE "bank_accounts" ADD CONSTRAINT "bank_accounts_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
