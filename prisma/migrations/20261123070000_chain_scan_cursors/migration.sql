-- Where each network's chain scanner is (the next block it reads), written by its scan activity after
-- every scan: the scanner's lag behind the chain head is readable outside its workflow (/metrics).
CREATE TABLE "chain_scan_cursors" (
    "chain_id" INTEGER NOT NULL,
    "next_from_block" BIGINT NOT NULL,
    "scanned_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "chain_scan_cursors_pkey" PRIMARY KEY ("chain_id"),
    CONSTRAINT "chain_scan_cursors_block_not_negative" CHECK ("next_from_block" >= 0)
);
