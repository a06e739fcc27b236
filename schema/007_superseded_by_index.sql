-- Deleting a delivery (prune, forget, an event's cascade) makes PostgreSQL
-- clear superseded_by wherever it names that delivery (ON DELETE SET NULL).
-- Without an index that is a full scan of the table per deleted row:
-- pruning 50,000 deliveries took minutes. Only superseded deliveries name
-- another one, so the index stays small and the relay's hot path never
-- writes to it.
-- Building it locks writes to the table for as long as it takes.
CREATE INDEX {{deliveries}}_superseded_by_idx ON {{deliveries}} (superseded_by)
  WHERE superseded_by IS NOT NULL;
