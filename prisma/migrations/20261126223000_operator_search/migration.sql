-- The operator console's search (src/domain/operator-search.ts): a Payment by externalReference across
-- apps, and anything by transaction hash, each one index lookup.
CREATE INDEX "payments_external_reference_idx" ON "payments"("external_reference");
CREATE INDEX "payment_transfers_tx_hash_idx" ON "payment_transfers"("tx_hash");
CREATE INDEX "deposits_tx_hash_idx" ON "deposits"("tx_hash");
CREATE INDEX "deposits_settlement_tx_hash_idx" ON "deposits"("settlement_tx_hash");
CREATE INDEX "fund_returns_transaction_hash_idx" ON "fund_returns"("transaction_hash");
