-- The partner dashboard (src/domain/dashboard/): memberships, emailed sign-in codes, sessions, the
-- audit of partner changes, and each app's request log.
CREATE TABLE "partner_users" (
    "id" TEXT NOT NULL,
    "app_id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "invited_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "removed_at" TIMESTAMPTZ(3),
    CONSTRAINT "partner_users_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "partner_users_role_check" CHECK ("role" IN ('admin', 'developer', 'viewer'))
);
CREATE UNIQUE INDEX "partner_users_app_id_email_key" ON "partner_users"("app_id", "email");
CREATE INDEX "partner_users_email_idx" ON "partner_users"("email");

CREATE TABLE "partner_sign_in_codes" (
    "id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "code_hash" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "partner_sign_in_codes_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "partner_sign_in_codes_email_created_at_idx" ON "partner_sign_in_codes"("email", "created_at");

CREATE TABLE "partner_sessions" (
    "id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "ended_at" TIMESTAMPTZ(3),
    CONSTRAINT "partner_sessions_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "partner_sessions_user_id_idx" ON "partner_sessions"("user_id");
CREATE INDEX "partner_sessions_expires_at_idx" ON "partner_sessions"("expires_at");

CREATE TABLE "partner_actions" (
    "id" TEXT NOT NULL,
    "app_id" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "target" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "partner_actions_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "partner_actions_app_id_created_at_id_idx" ON "partner_actions"("app_id", "created_at", "id");

CREATE TABLE "request_log" (
    "id" TEXT NOT NULL,
    "app_id" TEXT NOT NULL,
    "method" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "latency_ms" INTEGER NOT NULL,
    "idempotency_key" TEXT,
    "request_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "request_log_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "request_log_app_id_created_at_id_idx" ON "request_log"("app_id", "created_at", "id");
CREATE INDEX "request_log_created_at_idx" ON "request_log"("created_at");
