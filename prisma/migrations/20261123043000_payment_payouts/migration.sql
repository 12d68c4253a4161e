-- Bank payouts (issue 13): the off-ramp quote a send Payment to a bank account was created with, and
-- its payout at the provider. One row per bank Payment (src/domain/payments/payment-payouts.ts).
CREATE TABLE "payment_payouts" (
    "payment_id" TEXT NOT NULL,
    "bank_account_id" TEXT NOT NULL,
    "provider_code" TEXT NOT NULL,
    "provider_account_id" TEXT NOT NULL,
    "quote_id" TEXT NOT NULL,
    "source_atomic" DECIMAL(78,0) NOT NULL,
    "provider_principal_atomic" DECIMAL(78,0) NOT NULL,
    "provider_fee_atomic" DECIMAL(78,0) NOT NULL,
    "rate" TEXT NOT NULL,
    "destination_amount" TEXT NOT NULL,
    "destination_currency" TEXT NOT NULL,
    "deposit_address" TEXT NOT NULL,
    "quote_expires_at" TIMESTAMPTZ(3) NOT NULL,
    "sandbox_scenario" TEXT,
    "payout_id" TEXT,
    "payout_status" TEXT,
    "reason_code" TEXT,
    "refund_tx_hash" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "payment_payouts_pkey" PRIMARY KEY ("payment_id"),
    CONSTRAINT "payment_payouts_payout_status_known" CHECK ("payout_status" IS NULL OR "payout_status" IN ('submitted', 'processing', 'completed', 'failed', 'returned'))
);
CREATE INDEX "payment_payouts_bank_account_id_idx" ON "payment_payouts"("bank_account_id");
ALTER TABLE "payment_payouts" ADD CONSTRAINT "payment_payouts_payment_id_fkey" FOREIGN KEY ("payment_id") REFERENCES "payments"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "payment_payouts" ADD CONSTRAINT "payment_payouts_bank_account_id_fkey" FOREIGN KEY ("bank_account_id") REFERENCES "bank_accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
