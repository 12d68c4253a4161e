-- One settlement sender: every signed outgoing transfer (leg) of every resource that sends money out,
-- in one table instead of a JSON column per resource; and the leases that serialize senders.
CREATE TABLE "settlement_legs" (
    "id" TEXT NOT NULL,
    "source_type" TEXT NOT NULL,
    "source_id" TEXT NOT NULL,
    "leg" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "from_address" TEXT NOT NULL,
    "to_address" TEXT NOT NULL,
    "token_address" TEXT NOT NULL,
    "amount_atomic" DECIMAL(78,0) NOT NULL,
    "nonce" INTEGER NOT NULL,
    "tx_hash" TEXT NOT NULL,
    "serialized" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "settlement_legs_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "settlement_legs_amount_positive" CHECK ("amount_atomic" > 0),
    CONSTRAINT "settlement_legs_status_known" CHECK ("status" IN ('broadcast', 'confirmed', 'reverted', 'replaced'))
);
CREATE UNIQUE INDEX "settlement_legs_tx_hash_key" ON "settlement_legs"("tx_hash");
CREATE INDEX "settlement_legs_source_type_source_id_idx" ON "settlement_legs"("source_type", "source_id");
CREATE INDEX "settlement_legs_chain_id_from_address_nonce_idx" ON "settlement_legs"("chain_id", "from_address", "nonce");
-- At most one leg of each kind per resource can still count: a second one is signed only after the
-- first is known dead (reverted or replaced).
CREATE UNIQUE INDEX "settlement_legs_live_key" ON "settlement_legs"("source_type", "source_id", "leg")
    WHERE "status" IN ('broadcast', 'confirmed');

INSERT INTO "settlement_legs" ("id", "source_type", "source_id", "leg", "chain_id", "from_address", "to_address",
    "token_address", "amount_atomic", "nonce", "tx_hash", "serialized", "status")
SELECT 'leg_' || substr(encode(sha256(convert_to(lower(l->>'txHash'), 'UTF8')), 'hex'), 1, 32), 'payment', p."id", l->>'leg',
    p."chain_id", p."escrow_address", lower(l->>'to'), lower(p."token_address"), (l->>'amountAtomic')::DECIMAL(78,0),
    (l->>'nonce')::INTEGER, lower(l->>'txHash'), l->>'serialized', l->>'status'
FROM "payments" p, jsonb_array_elements(p."settlement_legs") l
WHERE p."escrow_address" IS NOT NULL
ON CONFLICT DO NOTHING;

INSERT INTO "settlement_legs" ("id", "source_type", "source_id", "leg", "chain_id", "from_address", "to_address",
    "token_address", "amount_atomic", "nonce", "tx_hash", "serialized", "status")
SELECT 'leg_' || substr(encode(sha256(convert_to(lower(l->>'txHash'), 'UTF8')), 'hex'), 1, 32), 'deposit', d."id", l->>'leg',
    d."chain_id", a."address", lower(l->>'to'), lower(d."token_address"), (l->>'amountAtomic')::DECIMAL(78,0),
    (l->>'nonce')::INTEGER, lower(l->>'txHash'), l->>'serialized', l->>'status'
FROM "deposits" d JOIN "deposit_addresses" a ON a."id" = d."deposit_address_id", jsonb_array_elements(d."settlement_legs") l
ON CONFLICT DO NOTHING;

ALTER TABLE "payments" DROP COLUMN "settlement_legs";
ALTER TABLE "deposits" DROP COLUMN "settlement_legs";

-- A lease per sender (chain, address): taken and released with one short statement each, so no
-- pooled connection is held while the holder talks to the chain; an expired lease can be taken over.
CREATE TABLE "sender_locks" (
    "key" TEXT NOT NULL,
    "holder" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "sender_locks_pkey" PRIMARY KEY ("key")
);
