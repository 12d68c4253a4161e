-- A transfer is identified by its place within its transaction (ordinal among the transaction's
-- transfers of the token to the recipient), not by its log index: a reorg can mine the same
-- transaction again elsewhere, at another log index, and it must still be the same transfer.
ALTER TABLE "payment_transfers" ADD COLUMN "ordinal" INTEGER;
UPDATE "payment_transfers" t SET "ordinal" = x."o"
FROM (SELECT "id", row_number() OVER (PARTITION BY "payment_id", "tx_hash" ORDER BY "log_index") - 1 AS "o" FROM "payment_transfers") x
WHERE x."id" = t."id";
ALTER TABLE "payment_transfers" ALTER COLUMN "ordinal" SET NOT NULL;
DROP INDEX "payment_transfers_chain_id_tx_hash_log_index_key";
CREATE UNIQUE INDEX "payment_transfers_payment_id_tx_hash_ordinal_key" ON "payment_transfers"("payment_id", "tx_hash", "ordinal");

-- What the transfer is to its Payment (funding, duplicate, late, excess), apart from where it stands
-- on chain (pending, confirmed, dropped; dust for amounts below the minimum, which no workflow follows).
-- NULL until the Payment's workflow has taken the transfer: a run that starts again takes those anew.
ALTER TABLE "payment_transfers" ADD COLUMN "role" TEXT;
UPDATE "payment_transfers" SET "role" = 'funding';
UPDATE "payment_transfers" SET "role" = "status", "status" = 'confirmed' WHERE "status" IN ('duplicate', 'late', 'excess');

-- Funding seen but still confirming: counted against what the payer is asked for.
ALTER TABLE "payments" ADD COLUMN "pending_atomic" DECIMAL(78,0) NOT NULL DEFAULT 0;

ALTER TABLE "deposits" ADD COLUMN "ordinal" INTEGER;
UPDATE "deposits" d SET "ordinal" = x."o"
FROM (SELECT "id", row_number() OVER (PARTITION BY "deposit_address_id", "tx_hash" ORDER BY "log_index") - 1 AS "o" FROM "deposits") x
WHERE x."id" = d."id";
ALTER TABLE "deposits" ALTER COLUMN "ordinal" SET NOT NULL;
-- The deposit's workflow, named when it was started (older deposits by their log index).
ALTER TABLE "deposits" ADD COLUMN "workflow_id" TEXT;
UPDATE "deposits" SET "workflow_id" = 'deposit:' || "chain_id" || ':' || lower("tx_hash") || ':' || "log_index";
ALTER TABLE "deposits" ALTER COLUMN "workflow_id" SET NOT NULL;
DROP INDEX "deposits_chain_id_tx_hash_log_index_key";
CREATE UNIQUE INDEX "deposits_deposit_address_id_tx_hash_ordinal_key" ON "deposits"("deposit_address_id", "tx_hash", "ordinal");
