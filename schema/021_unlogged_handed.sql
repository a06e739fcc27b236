-- A handed delivery (inserted already dispatched by routing, see
-- core/domain/handoff.hpp) lives for one round trip to a worker, and its
-- insert was most of the WAL the relay wrote per event
-- (docs/performance.md, "The handed delivery as an unlogged row").
-- Everything the relay must not lose is elsewhere: the event, the routing
-- cursor, the completion log, and every state that outlives a send. So
-- the deliveries table becomes partitioned by a `handed` flag:
--
--   <deliveries>_logged  (handed = false)  the table as it was, logged
--   <deliveries>_handed  (handed = true)   UNLOGGED: no WAL for its rows
--
-- Statements keep addressing <deliveries>. Routing inserts a handed
-- delivery with handed = true; every update of a delivery sets handed =
-- false, which moves a handed row into the logged partition in the same
-- statement (a retry, a failure, a timeout is as durable as before). A
-- completion deletes the row and appends its log row, as before.
--
-- A crash of PostgreSQL (or a failover to a standby) empties the unlogged
-- partition, and with it the marker table below. The router that leads
-- next finds the marker gone and routes again, as pending deliveries,
-- every delivery of the events from the stored floor (the lowest event id
-- that had a handed row when the cursor was last stored) up to the
-- cursor that would have been handed and is neither in the logged
-- partition nor in the completion log (core/pg/routing_pass.cpp). Those
-- jobs are sent once more, as at-least-once allows; nothing is lost.
-- Retention keeps what that needs: deliveries and log rows at or above
-- the floor.
--
-- The keys are per partition: a partitioned table's unique index must
-- hold the partition key, and (id, handed) would have meant rebuilding
-- the primary key of a live table. Ids come from one sequence, and an
-- event is routed once (the cursor), so neither key can repeat across
-- the two partitions. Routing's ON CONFLICT names no columns: a partition's
-- unique keys are its arbiters.
--
-- Upgrade: stop every node of an older version before this migration.
-- An older router's statement names the conflict columns, which a
-- partitioned table cannot arbitrate; an older result handler or sweeper
-- would leave a retry or a failure of a handed send in the unlogged
-- partition. The migration takes no time per row but one read of the
-- table (ATTACH checks that every row is unhanded).

ALTER TABLE {{deliveries}} RENAME TO {{deliveries}}_logged;
-- The id's sequence moves to the parent: dropping the identity drops its
-- sequence, so the next id is carried over by hand.
CREATE TEMPORARY TABLE outbox_next_delivery_id ON COMMIT DROP AS
  SELECT coalesce((SELECT last_value + 1 FROM {{deliveries}}_id_seq
                   WHERE is_called), 1) AS next_id;
ALTER TABLE {{deliveries}}_logged ALTER COLUMN id DROP IDENTITY;
ALTER TABLE {{deliveries}}_logged
  ADD COLUMN handed boolean NOT NULL DEFAULT false;

CREATE TABLE {{deliveries}} (
  LIKE {{deliveries}}_logged INCLUDING DEFAULTS INCLUDING CONSTRAINTS
) PARTITION BY LIST (handed);
ALTER TABLE {{deliveries}} ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY;
SELECT setval('{{deliveries}}_id_seq',
              greatest((SELECT next_id FROM outbox_next_delivery_id),
                       (SELECT coalesce(max(id), 0) + 1 FROM {{deliveries}}_logged)),
              false);

ALTER TABLE {{deliveries}} ATTACH PARTITION {{deliveries}}_logged
  FOR VALUES IN (false);

-- The unlogged partition, with the logged one's keys and indexes under
-- names of the same pattern (plans show a partition's index names), made
-- before it is attached so that the parent's indexes below take them over.
CREATE UNLOGGED TABLE {{deliveries}}_handed (
  LIKE {{deliveries}} INCLUDING DEFAULTS INCLUDING CONSTRAINTS
) WITH (
  -- Inserted and deleted within a round trip: vacuumed often.
  autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_insert_scale_factor = 0.02,
  autovacuum_vacuum_insert_threshold = 1000
);
ALTER TABLE {{deliveries}}_handed
  ADD CONSTRAINT {{deliveries}}_handed_pkey PRIMARY KEY (id),
  ADD CONSTRAINT {{deliveries}}_handed_event_key UNIQUE (event_id, job, queue),
  ADD CHECK (handed);
CREATE INDEX {{deliveries}}_handed_ready_idx
  ON {{deliveries}}_handed (queue, available_at, id)
  WHERE status = 'pending' AND available_at IS NOT NULL;
CREATE INDEX {{deliveries}}_handed_timeout_idx
  ON {{deliveries}}_handed (delivery_timeout_at) WHERE status = 'dispatched';
CREATE INDEX {{deliveries}}_handed_expiry_idx ON {{deliveries}}_handed (expires_at)
  WHERE status = 'pending' AND expires_at IS NOT NULL;
CREATE INDEX {{deliveries}}_handed_coalesce_idx
  ON {{deliveries}}_handed (coalesce_key, job, queue)
  WHERE status = 'pending' AND coalesce_key IS NOT NULL;
CREATE INDEX {{deliveries}}_handed_gave_up_idx ON {{deliveries}}_handed (queue, status)
  WHERE status IN ('failed', 'expired');
CREATE INDEX {{deliveries}}_handed_finished_idx
  ON {{deliveries}}_handed (status, finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX {{deliveries}}_handed_ordered_idx
  ON {{deliveries}}_handed (coalesce_key, job, queue, event_id)
  WHERE ordered AND (status IN ('pending', 'dispatched')
                     OR (block_on_failure AND status IN ('failed', 'expired')
                         AND skipped_at IS NULL));
CREATE INDEX {{deliveries}}_handed_key_holder_idx
  ON {{deliveries}}_handed (coalesce_key, job, queue)
  WHERE ordered AND (status = 'dispatched'
                     OR (status = 'pending' AND available_at IS NOT NULL)
                     OR (block_on_failure AND status IN ('failed', 'expired')
                         AND skipped_at IS NULL));
ALTER TABLE {{deliveries}} ATTACH PARTITION {{deliveries}}_handed
  FOR VALUES IN (true);

-- The keys stay per partition (see above). Every other index is made on
-- the parent, so that a partition made later would have it too: each
-- partition's index of the same definition is attached, not built again.
CREATE INDEX {{deliveries}}_p_ready ON {{deliveries}} (queue, available_at, id)
  WHERE status = 'pending' AND available_at IS NOT NULL;
CREATE INDEX {{deliveries}}_p_timeout ON {{deliveries}} (delivery_timeout_at)
  WHERE status = 'dispatched';
CREATE INDEX {{deliveries}}_p_expiry ON {{deliveries}} (expires_at)
  WHERE status = 'pending' AND expires_at IS NOT NULL;
CREATE INDEX {{deliveries}}_p_coalesce ON {{deliveries}} (coalesce_key, job, queue)
  WHERE status = 'pending' AND coalesce_key IS NOT NULL;
CREATE INDEX {{deliveries}}_p_gave_up ON {{deliveries}} (queue, status)
  WHERE status IN ('failed', 'expired');
CREATE INDEX {{deliveries}}_p_finished ON {{deliveries}} (status, finished_at)
  WHERE finished_at IS NOT NULL;
CREATE INDEX {{deliveries}}_p_ordered
  ON {{deliveries}} (coalesce_key, job, queue, event_id)
  WHERE ordered AND (status IN ('pending', 'dispatched')
                     OR (block_on_failure AND status IN ('failed', 'expired')
                         AND skipped_at IS NULL));
CREATE INDEX {{deliveries}}_p_key_holder ON {{deliveries}} (coalesce_key, job, queue)
  WHERE ordered AND (status = 'dispatched'
                     OR (status = 'pending' AND available_at IS NOT NULL)
                     OR (block_on_failure AND status IN ('failed', 'expired')
                         AND skipped_at IS NULL));

-- The floor of the handed deliveries, stored with the cursor: every
-- handed delivery of an event at or below the cursor's scanned id has an
-- event id at or above it. NULL: none.
ALTER TABLE {{events}}_routing ADD COLUMN handed_floor bigint;

-- Present while the unlogged partition holds what it held: PostgreSQL
-- empties every unlogged table after a crash, this one with the partition.
CREATE UNLOGGED TABLE {{deliveries}}_handed_alive (
  alive boolean PRIMARY KEY DEFAULT true CHECK (alive)
);
INSERT INTO {{deliveries}}_handed_alive DEFAULT VALUES;

-- A recovery looks up the log by event (the completion log's own BRIN
-- index leads with the completion time).
CREATE INDEX {{deliveries}}_log_event_brin ON {{deliveries}}_completed
  USING brin (event_id) WITH (autosummarize = on);
