-- Deposits: reusable deposit addresses, one deposit per inbound transfer, operator resolutions.
CREATE TABLE "deposit_addresses" (
    "id" TEXT NOT NULL,
    "app_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "network_code" TEXT NOT NULL,
    "asset_symbol" TEXT NOT NULL,
    "token_address" TEXT NOT NULL,
    "decimals" INTEGER NOT NULL,
    "custody_index" SERIAL NOT NULL,
    "address" TEXT,
    "status" TEXT NOT NULL,
    "platform_fee_bps" INTEGER NOT NULL,
    "partner_fee_bps" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "deposit_addresses_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "deposit_addresses_custody_index_key" ON "deposit_addresses"("custody_index");
CREATE UNIQUE INDEX "deposit_addresses_address_key" ON "deposit_addresses"("address");
CREATE INDEX "deposit_addresses_account_id_chain_id_asset_symbol_created_at_idx" ON "deposit_addresses"("account_id", "chain_id", "asset_symbol", "created_at");
CREATE INDEX "deposit_addresses_account_id_created_at_idx" ON "deposit_addresses"("account_id", "created_at");

CREATE TABLE "deposits" (
    "id" TEXT NOT NULL,
    "app_id" TEXT NOT NULL,
    "api_version" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "deposit_address_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "status_version" INTEGER NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "token_address" TEXT NOT NULL,
    "asset_symbol" TEXT NOT NULL,
    "decimals" INTEGER NOT NULL,
    "tx_hash" TEXT NOT NULL,
    "log_index" INTEGER NOT NULL,
    "block_number" BIGINT NOT NULL,
    "from_address" TEXT NOT NULL,
    "amount_atomic" DECIMAL(78,0) NOT NULL,
    "platform_fee_bps" INTEGER NOT NULL,
    "partner_fee_bps" INTEGER NOT NULL,
    "platform_fee_atomic" DECIMAL(78,0) NOT NULL,
    "partner_fee_atomic" DECIMAL(78,0) NOT NULL,
    "network_fee_atomic" DECIMAL(78,0) NOT NULL,
    "setup_fee_atomic" DECIMAL(78,0) NOT NULL,
    "net_atomic" DECIMAL(78,0) NOT NULL,
    "actual_received_atomic" DECIMAL(78,0),
    "settlement_status" TEXT NOT NULL,
    "settlement_tx_hash" TEXT,
    "settlement_reason_code" TEXT,
    "settled_at" TIMESTAMPTZ(3),
    "settlement_attempts" INTEGER NOT NULL DEFAULT 0,
    "settlement_legs" JSONB NOT NULL DEFAULT '[]',
    "settlement_profile_snapshot" JSONB NOT NULL,
    "failure_reason" TEXT,
    "reversed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "deposits_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "deposits_chain_id_tx_hash_log_index_key" ON "deposits"("chain_id", "tx_hash", "log_index");
CREATE INDEX "deposits_account_id_created_at_idx" ON "deposits"("account_id", "created_at");
CREATE INDEX "deposits_account_id_status_created_at_idx" ON "deposits"("account_id", "status", "created_at");
CREATE INDEX "deposits_status_settled_at_idx" ON "deposits"("status", "settled_at");
ALTER TABLE "deposits" ADD CONSTRAINT "deposits_deposit_address_id_fkey" FOREIGN KEY ("deposit_address_id") REFERENCES "deposit_addresses"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "deposit_resolutions" (
    "id" TEXT NOT NULL,
    "deposit_id" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "tx_hash" TEXT,
    "reason" TEXT,
    "actor" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "deposit_resolutions_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "deposit_resolutions_deposit_id_idx" ON "deposit_resolutions"("deposit_id");
ALTER TABLE "deposit_resolutions" ADD CONSTRAINT "deposit_resolutions_deposit_id_fkey" FOREIGN KEY ("deposit_id") REFERENCES "deposits"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
