-- Every statement that inserts events sends one NOTIFY on "webhook_events" (issue 11, item 4). PostgreSQL
-- delivers it only when the inserting transaction commits, and whoever wrote the event (the API, an
-- activity, a repair script) is covered. The worker's listener kicks the webhook dispatcher on it; the
-- dispatcher's poll stays as the safety net, so a lost notification costs latency, never an event.
CREATE FUNCTION "events_notify_trigger"() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('webhook_events', '');
  RETURN NULL;
END;
$$;

CREATE TRIGGER "events_notify"
    AFTER INSERT ON "events"
    FOR EACH STATEMENT EXECUTE FUNCTION "events_notify_trigger"();
