-- Every event carries its place among the events of its resource (1, 2, 3...), so a consumer can
-- order deliveries that arrive out of order. A number is taken under the resource's counter row,
-- held to the commit: a resource's numbers follow the order its changes committed, without gaps.
CREATE TABLE "event_resource_sequences" (
    "resource_type" TEXT NOT NULL,
    "resource_id" TEXT NOT NULL,
    "last_sequence" BIGINT NOT NULL,
    CONSTRAINT "event_resource_sequences_pkey" PRIMARY KEY ("resource_type", "resource_id")
);

ALTER TABLE "events" ADD COLUMN "resource_sequence" BIGINT NOT NULL DEFAULT 0;

-- Events written before: numbered in the order they were inserted.
UPDATE "events" e SET "resource_sequence" = n.rn
FROM (SELECT "id", row_number() OVER (PARTITION BY "resource_type", "resource_id" ORDER BY "sequence") AS rn FROM "events") n
WHERE e."id" = n."id";

INSERT INTO "event_resource_sequences" ("resource_type", "resource_id", "last_sequence")
SELECT "resource_type", "resource_id", max("resource_sequence") FROM "events" GROUP BY 1, 2;

-- The counter row is locked first, so a concurrent writer of the same event id has committed (or
-- rolled back) before the existence check: a retried step's rows are skipped and take no number
-- (every writer inserts with ON CONFLICT DO NOTHING, which this keeps).
CREATE FUNCTION "events_resource_sequence_trigger"() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "event_resource_sequences" AS s ("resource_type", "resource_id", "last_sequence")
    VALUES (NEW."resource_type", NEW."resource_id", 0)
    ON CONFLICT ("resource_type", "resource_id") DO UPDATE SET "last_sequence" = s."last_sequence";
  IF EXISTS (SELECT 1 FROM "events" WHERE "id" = NEW."id") THEN
    RETURN NULL;
  END IF;
  UPDATE "event_resource_sequences" SET "last_sequence" = "last_sequence" + 1
    WHERE "resource_type" = NEW."resource_type" AND "resource_id" = NEW."resource_id"
    RETURNING "last_sequence" INTO NEW."resource_sequence";
  RETURN NEW;
END;
$$;

CREATE TRIGGER "events_resource_sequence"
    BEFORE INSERT ON "events"
    FOR EACH ROW EXECUTE FUNCTION "events_resource_sequence_trigger"();
