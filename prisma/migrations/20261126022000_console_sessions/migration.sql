-- Operator console sessions, held server-side (src/domain/console-sessions.ts): a logout ends one at
-- once, whatever copies of its cookie exist, and each is bound to the admin token it was opened with
-- (a hash of it), so changing ADMIN_API_TOKEN ends every session opened under the old one.
CREATE TABLE "console_sessions" (
    "id" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "ended_at" TIMESTAMPTZ(3),
    CONSTRAINT "console_sessions_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "console_sessions_expires_at_idx" ON "console_sessions"("expires_at");
