-- A transfer to a Payment's escrow address of another asset, or on another chain, than the Payment's
-- ("foreign"): the transfer records its token, and the incident that holds it for recovery its chain
-- and token. NULL, as in every row from before: the Payment's own.
ALTER TABLE "payment_transfers" ADD COLUMN "token_address" TEXT;
ALTER TABLE "payment_incidents" ADD COLUMN "chain_id" INTEGER, ADD COLUMN "token_address" TEXT;
