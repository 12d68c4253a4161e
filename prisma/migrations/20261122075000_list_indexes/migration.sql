-- Every list the API pages is ordered by (created_at DESC, id DESC) under its filters. Each gets an
-- index of (its equality filters..., created_at, id), read backwards, so a page is an index range
-- scan that stops after `limit` rows: no sort of everything that matches. An index without the
-- trailing id still leaves an (incremental) sort; the shorter indexes it replaces are dropped.

-- GET /v2/payments (app; externalReference, status, createdFrom/To).
DROP INDEX "payments_app_id_created_at_idx";
CREATE INDEX "payments_app_id_created_at_id_idx" ON "payments"("app_id", "created_at", "id");
DROP INDEX "payments_app_id_external_reference_idx";
CREATE INDEX "payments_app_id_external_reference_created_at_id_idx" ON "payments"("app_id", "external_reference", "created_at", "id");
CREATE INDEX "payments_app_id_status_created_at_id_idx" ON "payments"("app_id", "status", "created_at", "id");
-- Every Payment read loads its incidents.
CREATE INDEX "payment_incidents_payment_id_idx" ON "payment_incidents"("payment_id");

-- GET /v2/accounts/{id}/deposits (status).
DROP INDEX "deposits_account_id_created_at_idx";
CREATE INDEX "deposits_account_id_created_at_id_idx" ON "deposits"("account_id", "created_at", "id");
DROP INDEX "deposits_account_id_status_created_at_idx";
CREATE INDEX "deposits_account_id_status_created_at_id_idx" ON "deposits"("account_id", "status", "created_at", "id");

-- GET /v2/accounts/{id}/deposit-addresses (chainId, assetSymbol); also the oldest active address of a
-- network and asset (the same index read forwards).
DROP INDEX "deposit_addresses_account_id_created_at_idx";
CREATE INDEX "deposit_addresses_account_id_created_at_id_idx" ON "deposit_addresses"("account_id", "created_at", "id");
DROP INDEX "deposit_addresses_account_id_chain_id_asset_symbol_created_at_idx";
CREATE INDEX "deposit_addresses_account_chain_asset_created_at_id_idx" ON "deposit_addresses"("account_id", "chain_id", "asset_symbol", "created_at", "id");

-- GET /v2/accounts/{id}/transactions (paymentId, status); (account_id, created_at, id) exists.
DROP INDEX "ledger_transactions_account_id_payment_id_idx";
CREATE INDEX "ledger_transactions_account_id_payment_id_created_at_id_idx" ON "ledger_transactions"("account_id", "payment_id", "created_at", "id");
CREATE INDEX "ledger_transactions_account_id_status_created_at_id_idx" ON "ledger_transactions"("account_id", "status", "created_at", "id");

-- Webhook endpoints of an app; webhook deliveries (endpointId, status).
DROP INDEX "webhook_endpoints_app_id_created_at_idx";
CREATE INDEX "webhook_endpoints_app_id_created_at_id_idx" ON "webhook_endpoints"("app_id", "created_at", "id");
DROP INDEX "webhook_deliveries_app_id_created_at_idx";
CREATE INDEX "webhook_deliveries_app_id_created_at_id_idx" ON "webhook_deliveries"("app_id", "created_at", "id");
DROP INDEX "webhook_deliveries_endpoint_id_created_at_idx";
CREATE INDEX "webhook_deliveries_endpoint_id_created_at_id_idx" ON "webhook_deliveries"("endpoint_id", "created_at", "id");
CREATE INDEX "webhook_deliveries_app_id_status_created_at_id_idx" ON "webhook_deliveries"("app_id", "status", "created_at", "id");
