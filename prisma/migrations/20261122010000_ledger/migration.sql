-- Ledger: double-entry postings and entries, and the UPA-facing transactions projected from them.
CREATE TABLE "ledger_postings" (
    "id" TEXT NOT NULL,
    "app_id" TEXT NOT NULL,
    "source_type" TEXT NOT NULL,
    "source_id" TEXT NOT NULL,
    "leg" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ledger_postings_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "ledger_postings_source_type_source_id_leg_key" ON "ledger_postings"("source_type", "source_id", "leg");
CREATE INDEX "ledger_postings_app_id_created_at_idx" ON "ledger_postings"("app_id", "created_at");

CREATE TABLE "ledger_entries" (
    "id" TEXT NOT NULL,
    "posting_id" TEXT NOT NULL,
    "line" INTEGER NOT NULL,
    "book" TEXT NOT NULL,
    "account_id" TEXT,
    "chain_id" INTEGER NOT NULL,
    "token_address" TEXT NOT NULL,
    "asset_symbol" TEXT NOT NULL,
    "decimals" INTEGER NOT NULL,
    "amount_atomic" DECIMAL(78,0) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ledger_entries_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "ledger_entries_amount_not_zero" CHECK ("amount_atomic" <> 0)
);
CREATE UNIQUE INDEX "ledger_entries_posting_id_line_key" ON "ledger_entries"("posting_id", "line");
CREATE INDEX "ledger_entries_account_id_chain_id_token_address_idx" ON "ledger_entries"("account_id", "chain_id", "token_address");
CREATE INDEX "ledger_entries_book_idx" ON "ledger_entries"("book");
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_posting_id_fkey" FOREIGN KEY ("posting_id") REFERENCES "ledger_postings"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "ledger_transactions" (
    "id" TEXT NOT NULL,
    "posting_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "direction" TEXT NOT NULL,
    "sender_account_id" TEXT,
    "receiver_account_id" TEXT,
    "chain_id" INTEGER NOT NULL,
    "token_address" TEXT NOT NULL,
    "asset_symbol" TEXT NOT NULL,
    "decimals" INTEGER NOT NULL,
    "amount_atomic" DECIMAL(78,0) NOT NULL,
    "status" TEXT NOT NULL,
    "financial_leg_kind" TEXT NOT NULL,
    "payment_id" TEXT,
    "description" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ledger_transactions_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "ledger_transactions_amount_positive" CHECK ("amount_atomic" > 0),
    CONSTRAINT "ledger_transactions_direction_known" CHECK ("direction" IN ('received', 'sent')),
    CONSTRAINT "ledger_transactions_status_known" CHECK ("status" IN ('pending', 'posted', 'reversed'))
);
CREATE INDEX "ledger_transactions_account_id_created_at_id_idx" ON "ledger_transactions"("account_id", "created_at", "id");
CREATE INDEX "ledger_transactions_account_id_payment_id_idx" ON "ledger_transactions"("account_id", "payment_id");
CREATE INDEX "ledger_transactions_posting_id_idx" ON "ledger_transactions"("posting_id");
ALTER TABLE "ledger_transactions" ADD CONSTRAINT "ledger_transactions_posting_id_fkey" FOREIGN KEY ("posting_id") REFERENCES "ledger_postings"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Belt and braces for balance. postToLedger refuses unbalanced input before writing anything; these
-- constraint triggers refuse it again, at COMMIT (DEFERRABLE INITIALLY DEFERRED, so a posting and its
-- entries can be inserted one statement at a time), for any writer: every posting touched by the
-- transaction must have at least two entries and its entries must sum to zero per asset
-- (chain_id, token_address). A refusal aborts the whole transaction with SQLSTATE 23514.
CREATE FUNCTION "ledger_check_posting"(posting TEXT) RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
    entry_count INTEGER;
    unbalanced RECORD;
BEGIN
    IF posting IS NULL OR NOT EXISTS (SELECT 1 FROM "ledger_postings" WHERE "id" = posting) THEN
        RETURN;
    END IF;
    SELECT count(*) INTO entry_count FROM "ledger_entries" WHERE "posting_id" = posting;
    IF entry_count < 2 THEN
        RAISE EXCEPTION 'ledger posting % has % entries; a posting needs at least two', posting, entry_count
            USING ERRCODE = 'check_violation';
    END IF;
    SELECT "chain_id", lower("token_address") AS "token", sum("amount_atomic") AS "total" INTO unbalanced
        FROM "ledger_entries" WHERE "posting_id" = posting
        GROUP BY "chain_id", lower("token_address") HAVING sum("amount_atomic") <> 0 LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'ledger posting % is unbalanced: its entries for asset %:% sum to %, not 0',
            posting, unbalanced."chain_id", unbalanced."token", unbalanced."total"
            USING ERRCODE = 'check_violation';
    END IF;
END $$;

CREATE FUNCTION "ledger_entries_balanced_trigger"() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM "ledger_check_posting"(OLD."posting_id");
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM "ledger_check_posting"(NEW."posting_id");
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION "ledger_postings_balanced_trigger"() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "ledger_check_posting"(NEW."id");
    RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER "ledger_entries_balanced"
    AFTER INSERT OR UPDATE OR DELETE ON "ledger_entries"
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION "ledger_entries_balanced_trigger"();

CREATE CONSTRAINT TRIGGER "ledger_postings_balanced"
    AFTER INSERT ON "ledger_postings"
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION "ledger_postings_balanced_trigger"();

-- The journal is append-only: UPDATE and DELETE of postings and entries, and DELETE of transactions,
-- are refused (a correction is a new, reversing posting). An operator repair can lift this for one
-- transaction with `SET LOCAL ledger.allow_repair = 'on'`; the balance triggers above still apply.
CREATE FUNCTION "ledger_append_only_trigger"() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
    IF coalesce(current_setting('ledger.allow_repair', true), '') = 'on' THEN
        IF TG_OP = 'DELETE' THEN
            RETURN OLD;
        END IF;
        RETURN NEW;
    END IF;
    RAISE EXCEPTION '% is append-only: % refused; post a reversing posting instead', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'restrict_violation';
END $$;

CREATE TRIGGER "ledger_postings_append_only"
    BEFORE UPDATE OR DELETE ON "ledger_postings"
    FOR EACH ROW EXECUTE FUNCTION "ledger_append_only_trigger"();

CREATE TRIGGER "ledger_entries_append_only"
    BEFORE UPDATE OR DELETE ON "ledger_entries"
    FOR EACH ROW EXECUTE FUNCTION "ledger_append_only_trigger"();

CREATE TRIGGER "ledger_transactions_append_only"
    BEFORE DELETE ON "ledger_transactions"
    FOR EACH ROW EXECUTE FUNCTION "ledger_append_only_trigger"();
