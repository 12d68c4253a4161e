-- A sandbox app's moves of a resource's clock: the audit of each move, and the clock's position (their sum).
CREATE TABLE "sandbox_clock_moves" (
    "id" TEXT NOT NULL,
    "app_id" TEXT NOT NULL,
    "resource_type" TEXT NOT NULL,
    "resource_id" TEXT NOT NULL,
    "seconds" INTEGER NOT NULL,
    "advanced_seconds" INTEGER NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "sandbox_clock_moves_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "sandbox_clock_moves_seconds_positive" CHECK ("seconds" > 0 AND "advanced_seconds" >= "seconds")
);

CREATE UNIQUE INDEX "sandbox_clock_moves_app_id_idempotency_key_key" ON "sandbox_clock_moves"("app_id", "idempotency_key");
CREATE INDEX "sandbox_clock_moves_resource_type_resource_id_created_at_idx" ON "sandbox_clock_moves"("resource_type", "resource_id", "created_at");

-- Append-only, as every audit table.
CREATE FUNCTION sandbox_clock_moves_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'sandbox_clock_moves is append-only';
END $$;
CREATE TRIGGER sandbox_clock_moves_append_only BEFORE UPDATE OR DELETE ON "sandbox_clock_moves"
  FOR EACH ROW EXECUTE FUNCTION sandbox_clock_moves_append_only();
