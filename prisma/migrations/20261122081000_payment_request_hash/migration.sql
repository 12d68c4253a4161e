-- The SHA-256 of the create request's body: the Payment id comes from (app, Idempotency-Key), so a
-- retry with the same key after a 5xx (which releases the key) finds this Payment, and must be the
-- same request to be handed it. NULL for Payments created before.
ALTER TABLE "payments" ADD COLUMN "request_hash" TEXT;
