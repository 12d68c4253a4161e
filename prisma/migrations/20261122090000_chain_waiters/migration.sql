-- The chain scanner asks, on every scan, which workflows wait on the chain (src/domain/chain-waiters.ts):
-- partial indexes keep that a read of the few in flight, not of every transfer, leg or deposit ever
-- recorded. Prisma's schema language can't express a partial index, so they live here only.
CREATE INDEX "payment_transfers_pending_idx" ON "payment_transfers"("chain_id", "payment_id") WHERE "status" = 'pending';
CREATE INDEX "settlement_legs_broadcast_idx" ON "settlement_legs"("chain_id", "source_type", "source_id") WHERE "status" = 'broadcast';
CREATE INDEX "deposits_in_flight_idx" ON "deposits"("chain_id", "workflow_id") WHERE "status" IN ('confirming', 'settling');
