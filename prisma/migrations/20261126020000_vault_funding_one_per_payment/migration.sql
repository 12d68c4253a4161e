-- One vault payment per Payment: at most one funding operation that is not failed (authorize checks
-- it under the Payment's row lock; the index makes a second one impossible, whatever the path).
CREATE UNIQUE INDEX "vault_funding_operations_payment_live_key" ON "vault_funding_operations"("payment_id") WHERE "status" <> 'failed';
