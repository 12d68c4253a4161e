-- Payments: read model, inbound transfers, recovery incidents and operator resolutions.
CREATE TABLE "payments" (
    "id" TEXT NOT NULL,
    "app_id" TEXT NOT NULL,
    "api_version" TEXT NOT NULL,
    "intent" TEXT NOT NULL,
    "amount_mode" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "offramp_status" TEXT,
    "stage" TEXT,
    "operational_state" TEXT NOT NULL,
    "operational_reason_code" TEXT,
    "operational_updated_at" TIMESTAMPTZ(3),
    "status_version" INTEGER NOT NULL,
    "recipient_account_id" TEXT NOT NULL,
    "sender_account_id" TEXT,
    "chain_id" INTEGER NOT NULL,
    "asset_code" TEXT NOT NULL,
    "token_address" TEXT NOT NULL,
    "decimals" INTEGER NOT NULL,
    "amount_atomic" DECIMAL(78,0) NOT NULL,
    "received_atomic" DECIMAL(78,0) NOT NULL DEFAULT 0,
    "platform_fee_bps" INTEGER NOT NULL,
    "partner_fee_bps" INTEGER NOT NULL,
    "platform_fee_atomic" DECIMAL(78,0) NOT NULL,
    "partner_fee_atomic" DECIMAL(78,0) NOT NULL,
    "merchant_net_atomic" DECIMAL(78,0) NOT NULL,
    "escrow_index" SERIAL NOT NULL,
    "escrow_address" TEXT,
    "recipient_display_name" TEXT,
    "recipient_logo_url" TEXT,
    "settlement" JSONB NOT NULL,
    "settlement_tx_hash" TEXT,
    "settlement_legs" JSONB NOT NULL DEFAULT '[]',
    "next_action_id" TEXT NOT NULL,
    "external_reference" TEXT,
    "description" TEXT,
    "metadata" JSONB NOT NULL,
    "return_url" TEXT,
    "cancel_reason_code" TEXT,
    "cancel_reason" TEXT,
    "failure_code" TEXT,
    "failure_message" TEXT,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "accepted_at" TIMESTAMPTZ(3),
    "succeeded_at" TIMESTAMPTZ(3),
    "cancelled_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "payments_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "payments_escrow_index_key" ON "payments"("escrow_index");
CREATE UNIQUE INDEX "payments_escrow_address_key" ON "payments"("escrow_address");
CREATE INDEX "payments_app_id_created_at_idx" ON "payments"("app_id", "created_at");
CREATE INDEX "payments_app_id_external_reference_idx" ON "payments"("app_id", "external_reference");

CREATE TABLE "payment_transfers" (
    "id" TEXT NOT NULL,
    "payment_id" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "tx_hash" TEXT NOT NULL,
    "log_index" INTEGER NOT NULL,
    "block_number" BIGINT NOT NULL,
    "from_address" TEXT NOT NULL,
    "amount_atomic" DECIMAL(78,0) NOT NULL,
    "status" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "payment_transfers_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "payment_transfers_chain_id_tx_hash_log_index_key" ON "payment_transfers"("chain_id", "tx_hash", "log_index");
ALTER TABLE "payment_transfers" ADD CONSTRAINT "payment_transfers_payment_id_fkey" FOREIGN KEY ("payment_id") REFERENCES "payments"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "payment_incidents" (
    "id" TEXT NOT NULL,
    "payment_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "amount_atomic" DECIMAL(78,0) NOT NULL,
    "transfer_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "payment_incidents_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "payment_incidents_transfer_id_key" ON "payment_incidents"("transfer_id");
ALTER TABLE "payment_incidents" ADD CONSTRAINT "payment_incidents_payment_id_fkey" FOREIGN KEY ("payment_id") REFERENCES "payments"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "payment_resolutions" (
    "id" TEXT NOT NULL,
    "payment_id" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "tx_hash" TEXT,
    "reason" TEXT,
    "actor" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "payment_resolutions_pkey" PRIMARY KEY ("id")
);
ALTER TABLE "payment_resolutions" ADD CONSTRAINT "payment_resolutions_payment_id_fkey" FOREIGN KEY ("payment_id") REFERENCES "payments"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
