-- A completed delivery leaves the deliveries table. Until now a completion
-- updated the delivery (status, completed_at, finished_at): an update no
-- index lets stay HOT, so it wrote a new version of the whole row and an
-- entry in each of three indexes, then retention deleted the row again.
-- Now the common completion (not of an ordered key) deletes the row and
-- appends a narrow record to the completion log below: a delete writes no
-- index entry, and the log has no index but a BRIN one. Measured in
-- docs/performance.md ("The completion log").
--
-- The deliveries table so holds what is still open, what ended otherwise
-- (failed, expired, superseded) and completions of ordered keys and of
-- batches with other results (those still update the row, as before);
-- `outboxctl status` counts both.
--
-- Routing an event again must still create nothing twice, and the unique
-- (event_id, job, queue) key no longer sees a completed delivery. So the
-- routing cursor stores, in every routing transaction, all it knows above
-- its position (core/domain/routing_cursor.hpp): the highest id looked at
-- and the ids below it that are not routed yet. A router that takes over
-- resumes exactly there instead of walking events it routed before.
--
-- Upgrade: stop every router of an older version before this migration
-- (as for 014 and 015). An older router stores only the position, now and
-- then, and relies on the unique key for the events above it that it
-- routes again; with completed deliveries gone from the table it would
-- send those again.

CREATE TABLE {{deliveries}}_completed (
  id            bigint NOT NULL,      -- the delivery's id
  event_id      bigint NOT NULL,
  job           text NOT NULL,
  queue         text NOT NULL,
  attempts      integer NOT NULL,
  created_at    timestamptz NOT NULL, -- when the delivery was routed
  dispatched_at timestamptz,         -- its last send
  completed_at  timestamptz NOT NULL DEFAULT now()
) WITH (
  -- Appended to at its end and deleted from its start by retention.
  autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_insert_scale_factor = 0.02,
  autovacuum_vacuum_insert_threshold = 1000
);

-- Rows arrive in completion order, which is close to id order: a BRIN
-- index finds retention's old rows and a late result's delivery by
-- reading the page ranges that may hold them, and costs an insert almost
-- nothing (a range's summary changes only when a value falls outside it;
-- a full range is summarized by autovacuum).
CREATE INDEX {{deliveries}}_completed_brin ON {{deliveries}}_completed
  USING brin (completed_at, id) WITH (autosummarize = on);

-- What the routing cursor knows above its position: the highest id looked
-- at, and the ids up to it that are not routed yet (gaps, held ordered
-- events) as [first, last] pairs. NULL: nothing above the position.
ALTER TABLE {{events}}_routing
  ADD COLUMN scanned bigint,
  ADD COLUMN open_ranges bigint[];

-- superseded_by names the newer delivery for the record; the foreign key's
-- ON DELETE SET NULL ran a statement for every deleted delivery, now every
-- completion, and erased the name when the newer one completed.
-- (Found by its column: PostgreSQL shortens a generated name that is long.)
DO $$
DECLARE
  v_name text;
BEGIN
  SELECT c.conname INTO v_name FROM pg_constraint c
  JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY(c.conkey)
  WHERE c.conrelid = '{{deliveries}}'::regclass AND c.contype = 'f'
    AND a.attname = 'superseded_by';
  IF v_name IS NOT NULL THEN
    EXECUTE format('ALTER TABLE {{deliveries}} DROP CONSTRAINT %I', v_name);
  END IF;
END
$$;
DROP INDEX {{deliveries}}_superseded_by_idx;
