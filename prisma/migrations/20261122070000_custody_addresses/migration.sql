-- Every address the service's custody derives and hands out (escrow, deposit, treasury, fee, ...):
-- the one place that answers "is this address ours?", so none of them can become a payout destination.
CREATE TABLE "custody_addresses" (
    "address" TEXT NOT NULL,
    "purpose" TEXT NOT NULL,
    "custody_index" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "custody_addresses_pkey" PRIMARY KEY ("address"),
    CONSTRAINT "custody_addresses_address_lowercase" CHECK ("address" = lower("address"))
);
CREATE UNIQUE INDEX "custody_addresses_purpose_custody_index_key" ON "custody_addresses"("purpose", "custody_index");

INSERT INTO "custody_addresses" ("address", "purpose", "custody_index")
SELECT lower("escrow_address"), 'escrow', "escrow_index" FROM "payments" WHERE "escrow_address" IS NOT NULL
ON CONFLICT DO NOTHING;
INSERT INTO "custody_addresses" ("address", "purpose", "custody_index")
SELECT lower("address"), 'deposit', "custody_index" FROM "deposit_addresses" WHERE "address" IS NOT NULL
ON CONFLICT DO NOTHING;
