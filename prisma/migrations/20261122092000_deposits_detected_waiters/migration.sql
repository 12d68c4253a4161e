-- A detected deposit waits on the chain too (its source has no confirmation yet): the chain scanner
-- signals it like a confirming or settling one (src/domain/chain-waiters.ts).
DROP INDEX "deposits_in_flight_idx";
CREATE INDEX "deposits_in_flight_idx" ON "deposits"("chain_id", "workflow_id") WHERE "status" IN ('detected', 'confirming', 'settling');
