-- Built-in retention (docs/operations.md "Retention"): the index its
-- deletes go by, and autovacuum settings for two tables that work like
-- queues. Rows come in, change state within seconds and are deleted hours
-- later, so the default thresholds (20% of the table dead before a vacuum)
-- let a large table carry a large share of dead rows and grow between
-- vacuums; a vacuum that comes often has little to do each time.

-- Final deliveries by status and age: each retention batch reads only the
-- rows it deletes. Open deliveries (finished_at NULL) never enter it.
-- Building it locks writes to the table for as long as it takes.
CREATE INDEX {{deliveries}}_finished_idx ON {{deliveries}} (status, finished_at)
  WHERE finished_at IS NOT NULL;

-- Deliveries: every state change is an update of a row (a dead version
-- each), and retention deletes them in batches. Vacuum once about 2% of
-- the rows (plus 1,000) are dead, and after 1,000 inserts (plus 2%) so
-- that the visibility map keeps up with a table that mostly grows at its
-- end. No analyze threshold change: the relay's plans go by index whatever
-- the statistics say (core/pg/db_stores.cpp). Fillfactor 90 keeps room in
-- each page for the next version of its rows, so a state change can stay
-- in the page (and the index entries of columns it does not change need
-- no new entry when no indexed column changes).
ALTER TABLE {{deliveries}} SET (
  fillfactor = 90,
  autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_insert_scale_factor = 0.02,
  autovacuum_vacuum_insert_threshold = 1000
);

-- Events: written once, routed once (an update), deleted with their last
-- delivery. The same thresholds.
ALTER TABLE {{events}} SET (
  autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_insert_scale_factor = 0.02,
  autovacuum_vacuum_insert_threshold = 1000
);
