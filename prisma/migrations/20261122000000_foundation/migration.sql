-- Foundation: apps, idempotency, rate limits, accounts and their parts, event outbox.
CREATE TABLE "apps" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "environment" TEXT NOT NULL,
    "secret_hash" TEXT NOT NULL,
    "scopes" TEXT[],
    "api_version" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "apps_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "idempotency_records" (
    "app_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "method" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "response_status" INTEGER,
    "response_body" TEXT,
    "locked_until" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),
    CONSTRAINT "idempotency_records_pkey" PRIMARY KEY ("app_id", "key")
);

CREATE TABLE "rate_limits" (
    "key" VARCHAR(255) NOT NULL,
    "points" INTEGER NOT NULL DEFAULT 0,
    "expire" BIGINT,
    CONSTRAINT "rate_limits_pkey" PRIMARY KEY ("key")
);

CREATE TABLE "accounts" (
    "id" TEXT NOT NULL,
    "app_id" TEXT NOT NULL,
    "external_user_id" TEXT NOT NULL,
    "subject_type" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "public_receive_enabled" BOOLEAN NOT NULL DEFAULT true,
    "payment_acceptance_version" INTEGER NOT NULL DEFAULT 1,
    "metadata" JSONB NOT NULL,
    "display_name" TEXT,
    "logo_url" TEXT,
    "display_profile_version" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "accounts_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "accounts_app_id_external_user_id_key" ON "accounts"("app_id", "external_user_id");
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "display_profile_revisions" (
    "account_id" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "display_name" TEXT NOT NULL,
    "logo_url" TEXT,
    "reason" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "display_profile_revisions_pkey" PRIMARY KEY ("account_id", "version")
);
ALTER TABLE "display_profile_revisions" ADD CONSTRAINT "display_profile_revisions_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "payment_handles" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "namespace" TEXT NOT NULL,
    "handle" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "payment_handles_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "payment_handles_account_id_key" ON "payment_handles"("account_id");
CREATE UNIQUE INDEX "payment_handles_namespace_handle_key" ON "payment_handles"("namespace", "handle");
ALTER TABLE "payment_handles" ADD CONSTRAINT "payment_handles_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "connected_wallets" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "address" TEXT NOT NULL,
    "label" TEXT,
    "status" TEXT NOT NULL,
    "ownership_verification_status" TEXT NOT NULL,
    "ownership_verification_method" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "connected_wallets_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "connected_wallets_account_id_chain_id_address_key" ON "connected_wallets"("account_id", "chain_id", "address");
ALTER TABLE "connected_wallets" ADD CONSTRAINT "connected_wallets_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "settlement_profiles" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "connected_wallet_id" TEXT,
    "settlement_destination_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "destination_type" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "destination_address" TEXT NOT NULL,
    "asset_symbol" TEXT NOT NULL,
    "token_address" TEXT NOT NULL,
    "snapshot" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "settlement_profiles_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "settlement_profiles_account_id_key" ON "settlement_profiles"("account_id");
ALTER TABLE "settlement_profiles" ADD CONSTRAINT "settlement_profiles_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "events" (
    "id" TEXT NOT NULL,
    "app_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "api_version" TEXT NOT NULL,
    "account_id" TEXT,
    "resource_type" TEXT NOT NULL,
    "resource_id" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "events_app_id_created_at_idx" ON "events"("app_id", "created_at");
