-- Retention without row deletes (docs/design.md "Retention drops whole
-- partitions (022)"). Until now retention deleted the events and the
-- completion log's rows one by one, a WAL record and a dead row each,
-- as many as were written. Now both tables are partitioned into a ring of
-- four partitions by a `bucket` column that the insert's clock fills in:
--
--   bucket = floor(epoch(now()) / span) mod 4
--
-- with span = the completed window / 2 (set by the retention leader from
-- the config; <events>_ring_span()). A partition so takes the rows of one
-- span and is written again four spans later. In the span before that,
-- its rows are at least two spans (the window) old, and the retention
-- leader empties it with TRUNCATE: one WAL record for the whole partition.
-- What must outlive it (an event not routed yet or still in a recovery's
-- reach, an event with a delivery in the deliveries table, a quarantined
-- event inside its window, a log row inside its window) is moved to the
-- current partition first, in the same transaction, under the partition's
-- lock (core/pg/retention_ring.cpp). Nothing is lost if the clock, the
-- span or the relay's pace are not what they should be: the move decides,
-- not the age.
--
--   <events>_p0 .. _p3                the events
--   <deliveries>_completed_p0 .. _p3  the completion log
--
-- Statements keep addressing <events> and <deliveries>_completed; an
-- insert locks only the partition it writes (so a TRUNCATE never waits
-- for a business transaction, nor one for it). The four partitions exist
-- from here on: no partition is ever created or dropped while the relay
-- runs, so no insert can find its partition missing.
--
-- The events' primary key is per partition (a partitioned table's unique
-- index must hold the partition key): ids come from one sequence, now the
-- parent's, and are never written by hand (GENERATED ALWAYS).
--
-- Upgrade: stop every node of an older version before this migration (an
-- older relay deletes log rows one by one, which still works, but it
-- counts the events table's figures from the parent, which has none).
-- The migration takes no time per row but one read of each table (ATTACH
-- checks the bucket of every row of the table it attaches).

CREATE TABLE {{events}}_ring (
  one          boolean PRIMARY KEY DEFAULT true CHECK (one),
  span_seconds float8 NOT NULL CHECK (span_seconds > 0),
  -- When the span last changed: until four spans later a partition may
  -- hold rows of another span's slots, and the leader truncates nothing.
  since        timestamptz NOT NULL DEFAULT now()
);
-- 6 h, the default completed window, / 2; the leader sets the config's.
INSERT INTO {{events}}_ring (span_seconds) VALUES (10800);

-- An insert's plan takes the body in as a constant, and PostgreSQL plans
-- again, in every session, when the leader replaces the function for a
-- new span. STABLE, not IMMUTABLE: an IMMUTABLE function would be folded
-- to its value with no record of it in the plan, and a cached plan (a
-- prepared insert, a publish function's) would keep the old span.
CREATE FUNCTION {{events}}_ring_span() RETURNS float8
LANGUAGE sql STABLE PARALLEL SAFE AS $$ SELECT 10800::float8 $$;

CREATE FUNCTION {{events}}_ring_slot() RETURNS smallint
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT (floor(extract(epoch FROM now()) / {{events}}_ring_span())::bigint % 4)::smallint
$$;

-- What a table of the ring needs for autovacuum: appended to, then
-- emptied whole; the thresholds of 012 for the deletes that remain.
DO $$
DECLARE
  v_cur smallint := {{events}}_ring_slot();
  v_next_id bigint;
  v_last_id bigint;
  v_vacuum text := 'autovacuum_vacuum_scale_factor = 0.02, '
                   'autovacuum_vacuum_threshold = 1000, '
                   'autovacuum_vacuum_insert_scale_factor = 0.02, '
                   'autovacuum_vacuum_insert_threshold = 1000';
BEGIN
  -- The events. Today's table becomes the partition of the current slot,
  -- its rows all in it (a constant default: no rewrite).
  SELECT coalesce((SELECT last_value + 1 FROM {{events}}_id_seq WHERE is_called), 1)
    INTO v_next_id;
  EXECUTE format('ALTER TABLE {{events}} RENAME TO %I', '{{events}}_p' || v_cur);
  EXECUTE format('ALTER TABLE %I RENAME CONSTRAINT {{events}}_pkey TO %I',
                 '{{events}}_p' || v_cur, '{{events}}_p' || v_cur || '_pkey');
  EXECUTE format('ALTER INDEX {{events}}_quarantined_idx RENAME TO %I',
                 '{{events}}_p' || v_cur || '_quarantined_idx');
  -- Dropping the identity drops its sequence: the next id is carried over.
  EXECUTE format('ALTER TABLE %I ALTER COLUMN id DROP IDENTITY', '{{events}}_p' || v_cur);
  EXECUTE format('ALTER TABLE %I ADD COLUMN bucket smallint NOT NULL DEFAULT %s',
                 '{{events}}_p' || v_cur, v_cur);
  -- The row triggers go to the parent, which gives every partition a copy;
  -- the statement triggers go to the parent, where statements address it.
  EXECUTE format('DROP TRIGGER {{events}}_check_headers_trg ON %I', '{{events}}_p' || v_cur);
  EXECUTE format('DROP TRIGGER {{events}}_delete_deliveries_trg ON %I', '{{events}}_p' || v_cur);
  EXECUTE format('DROP TRIGGER {{events}}_truncate_deliveries_trg ON %I', '{{events}}_p' || v_cur);

  EXECUTE format('CREATE TABLE {{events}} (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)'
                 ' PARTITION BY LIST (bucket)', '{{events}}_p' || v_cur);
  ALTER TABLE {{events}} ALTER COLUMN bucket SET DEFAULT {{events}}_ring_slot();
  ALTER TABLE {{events}} ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY;
  -- As the old sequence stood: the last id issued, is_called (the router
  -- reads an uncalled sequence as "no event yet", and would reset its
  -- cursor to 0, routing everything again).
  EXECUTE format('SELECT greatest(%s, (SELECT coalesce(max(id), 0) + 1 FROM %I)) - 1',
                 v_next_id, '{{events}}_p' || v_cur) INTO v_last_id;
  IF v_last_id > 0 THEN
    PERFORM setval('{{events}}_id_seq', v_last_id, true);
  END IF;
  EXECUTE format('ALTER TABLE {{events}} ATTACH PARTITION %I FOR VALUES IN (%s)',
                 '{{events}}_p' || v_cur, v_cur);
  FOR v_slot IN 0..3 LOOP
    CONTINUE WHEN v_slot = v_cur;
    EXECUTE format('CREATE TABLE %I (LIKE {{events}} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)'
                   ' WITH (%s)', '{{events}}_p' || v_slot, v_vacuum);
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I PRIMARY KEY (id)',
                   '{{events}}_p' || v_slot, '{{events}}_p' || v_slot || '_pkey');
    EXECUTE format('CREATE INDEX %I ON %I (id) WHERE quarantined_at IS NOT NULL',
                   '{{events}}_p' || v_slot || '_quarantined_idx', '{{events}}_p' || v_slot);
    EXECUTE format('ALTER TABLE {{events}} ATTACH PARTITION %I FOR VALUES IN (%s)',
                   '{{events}}_p' || v_slot, v_slot);
  END LOOP;

  -- The completion log, the same way (it has no key and no identity).
  EXECUTE format('ALTER TABLE {{deliveries}}_completed RENAME TO %I',
                 '{{deliveries}}_completed_p' || v_cur);
  EXECUTE format('ALTER TABLE %I ADD COLUMN bucket smallint NOT NULL DEFAULT %s',
                 '{{deliveries}}_completed_p' || v_cur, v_cur);
  EXECUTE format('ALTER INDEX {{deliveries}}_completed_brin RENAME TO %I',
                 '{{deliveries}}_completed_p' || v_cur || '_brin');
  EXECUTE format('ALTER INDEX {{deliveries}}_log_event_brin RENAME TO %I',
                 '{{deliveries}}_completed_p' || v_cur || '_event_brin');
  EXECUTE format('CREATE TABLE {{deliveries}}_completed (LIKE %I INCLUDING DEFAULTS'
                 ' INCLUDING CONSTRAINTS) PARTITION BY LIST (bucket)',
                 '{{deliveries}}_completed_p' || v_cur);
  ALTER TABLE {{deliveries}}_completed ALTER COLUMN bucket SET DEFAULT {{events}}_ring_slot();
  EXECUTE format('ALTER TABLE {{deliveries}}_completed ATTACH PARTITION %I FOR VALUES IN (%s)',
                 '{{deliveries}}_completed_p' || v_cur, v_cur);
  FOR v_slot IN 0..3 LOOP
    CONTINUE WHEN v_slot = v_cur;
    EXECUTE format('CREATE TABLE %I (LIKE {{deliveries}}_completed INCLUDING DEFAULTS'
                   ' INCLUDING CONSTRAINTS) WITH (%s)',
                   '{{deliveries}}_completed_p' || v_slot, v_vacuum);
    EXECUTE format('CREATE INDEX %I ON %I USING brin (completed_at, id)'
                   ' WITH (autosummarize = on)',
                   '{{deliveries}}_completed_p' || v_slot || '_brin',
                   '{{deliveries}}_completed_p' || v_slot);
    EXECUTE format('CREATE INDEX %I ON %I USING brin (event_id) WITH (autosummarize = on)',
                   '{{deliveries}}_completed_p' || v_slot || '_event_brin',
                   '{{deliveries}}_completed_p' || v_slot);
    EXECUTE format('ALTER TABLE {{deliveries}}_completed ATTACH PARTITION %I FOR VALUES IN (%s)',
                   '{{deliveries}}_completed_p' || v_slot, v_slot);
  END LOOP;
END
$$;

-- The indexes on the parents, which take over each partition's index of
-- the same definition (named by partition above: plans show them).
-- (Names that stay within PostgreSQL's 63 bytes for table names of 48,
-- the longest the config takes.)
CREATE INDEX {{events}}_quarantined ON {{events}} (id)
  WHERE quarantined_at IS NOT NULL;
CREATE INDEX {{deliveries}}_log_brin ON {{deliveries}}_completed
  USING brin (completed_at, id) WITH (autosummarize = on);
CREATE INDEX {{deliveries}}_log_event_brin ON {{deliveries}}_completed
  USING brin (event_id) WITH (autosummarize = on);

CREATE TRIGGER {{events}}_check_headers_trg
  BEFORE INSERT ON {{events}}
  FOR EACH ROW WHEN (NEW.headers IS NOT NULL)
  EXECUTE FUNCTION {{publish_function}}_check_headers();

-- A delete of events (by an operator, by retention's row passes) takes
-- their deliveries along (017). A TRUNCATE of the parent too; retention
-- truncates a partition, which fires neither: it has moved every event
-- with a delivery out of it first.
CREATE TRIGGER {{events}}_delete_deliveries_trg
  AFTER DELETE ON {{events}}
  REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION {{events}}_delete_deliveries();
CREATE TRIGGER {{events}}_truncate_deliveries_trg
  AFTER TRUNCATE ON {{events}}
  FOR EACH STATEMENT EXECUTE FUNCTION {{events}}_truncate_deliveries();
