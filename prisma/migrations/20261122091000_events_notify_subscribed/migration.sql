-- Only events an enabled endpoint may want kick the dispatcher (issue 11): every kick costs the
-- engine a workflow task and a dispatch pass, and the bench measured the API's create rate halved by
-- kicks for an app with no endpoint at all. Events of other apps wait for the dispatcher's poll,
-- which only marks them dispatched.
DROP TRIGGER "events_notify" ON "events";

CREATE OR REPLACE FUNCTION "events_notify_trigger"() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (
    SELECT 1 FROM "new_events" e
      JOIN "webhook_endpoints" w ON w."app_id" = e."app_id" AND w."status" = 'enabled'
  ) THEN
    PERFORM pg_notify('webhook_events', '');
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "events_notify"
    AFTER INSERT ON "events"
    REFERENCING NEW TABLE AS "new_events"
    FOR EACH STATEMENT EXECUTE FUNCTION "events_notify_trigger"();
