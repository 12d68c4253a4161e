-- Live finality (docs/decisions/custody-and-chains.md, "Live finality"): where the scanner last read
-- each of our transactions mined, and the time of its head block and the network's measured block time,
-- so a read answers a transfer's or a settlement leg's confirmations without asking the chain.
ALTER TABLE "chain_scan_cursors" ADD COLUMN "head_block_at" TIMESTAMPTZ(3),
ADD COLUMN "block_time_ms" INTEGER,
ADD CONSTRAINT "chain_scan_cursors_block_time_positive" CHECK ("block_time_ms" IS NULL OR "block_time_ms" >= 0);

CREATE TABLE "chain_inclusions" (
    "chain_id" INTEGER NOT NULL,
    "tx_hash" TEXT NOT NULL,
    "block_number" BIGINT NOT NULL,
    "seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "chain_inclusions_pkey" PRIMARY KEY ("chain_id", "tx_hash"),
    CONSTRAINT "chain_inclusions_block_not_negative" CHECK ("block_number" >= 0)
);

-- A reorg forgets every inclusion from the block it rescans from.
CREATE INDEX "chain_inclusions_chain_id_block_number_idx" ON "chain_inclusions"("chain_id", "block_number");

-- The incoming transfers recorded before: where the scanner read them (a settlement leg's block was never kept).
INSERT INTO "chain_inclusions" ("chain_id", "tx_hash", "block_number")
SELECT "chain_id", "tx_hash", max("block_number") FROM (
    SELECT "chain_id", "tx_hash", "block_number" FROM "payment_transfers" WHERE "status" IN ('pending', 'confirmed')
    UNION ALL
    SELECT "chain_id", "tx_hash", "block_number" FROM "deposits" WHERE "status" <> 'reversed'
) t GROUP BY "chain_id", "tx_hash"
ON CONFLICT DO NOTHING;
