-- Vault receipts: ERC-20 transfers into vault addresses, followed to the confirmation depth and posted
-- to the vault's book (custody:vault:<vaultId>).
CREATE TABLE "vault_receipts" (
    "id" TEXT NOT NULL,
    "vault_id" TEXT NOT NULL,
    "app_id" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "token_address" TEXT NOT NULL,
    "asset_symbol" TEXT NOT NULL,
    "decimals" INTEGER NOT NULL,
    "transfer_key" TEXT NOT NULL,
    "tx_hash" TEXT NOT NULL,
    "log_index" INTEGER NOT NULL,
    "ordinal" INTEGER NOT NULL,
    "block_number" TEXT NOT NULL,
    "from_address" TEXT NOT NULL,
    "amount_atomic" DECIMAL(78,0) NOT NULL,
    "status" TEXT NOT NULL,
    "posted_at" TIMESTAMPTZ(3),
    "verified_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "vault_receipts_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "vault_receipts_status_known" CHECK ("status" IN ('seen', 'posted', 'dropped', 'reversed')),
    CONSTRAINT "vault_receipts_amount_positive" CHECK ("amount_atomic" > 0)
);
CREATE UNIQUE INDEX "vault_receipts_transfer_key_key" ON "vault_receipts"("transfer_key");
CREATE INDEX "vault_receipts_status_created_at_idx" ON "vault_receipts"("status", "created_at");
CREATE INDEX "vault_receipts_vault_id_idx" ON "vault_receipts"("vault_id");
ALTER TABLE "vault_receipts" ADD CONSTRAINT "vault_receipts_vault_id_fkey" FOREIGN KEY ("vault_id") REFERENCES "vaults"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
