-- The event log (GET /v2/events): each list reads one index range in its order (created_at DESC,
-- id DESC), by app, by resource, or by name. The first replaces the app's (app_id, created_at) index.
DROP INDEX "events_app_id_created_at_idx";
CREATE INDEX "events_app_id_created_at_id_idx" ON "events"("app_id", "created_at", "id");
CREATE INDEX "events_app_id_resource_id_created_at_id_idx" ON "events"("app_id", "resource_id", "created_at", "id");
CREATE INDEX "events_app_id_name_created_at_id_idx" ON "events"("app_id", "name", "created_at", "id");
