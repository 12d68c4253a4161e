-- Public Payment creation (issue 14). A Payment's origin: 'partner' (POST /v2/payments) or 'public'
-- (POST /v2/public/apps/{appId}/payments, made by an anonymous payer); public Payments' events carry
-- no account id, in the payload or in the webhook headers.
ALTER TABLE "payments" ADD COLUMN "origin" TEXT NOT NULL DEFAULT 'partner';

-- Receiving public Payments is opt-in: a partner turns it on per account
-- (PUT /v2/accounts/{accountId}/payment-acceptance). No account consented before the switch existed,
-- so existing accounts start off too.
ALTER TABLE "accounts" ALTER COLUMN "public_receive_enabled" SET DEFAULT false;
UPDATE "accounts" SET "public_receive_enabled" = false WHERE "public_receive_enabled";
