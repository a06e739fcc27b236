-- A change of status is never a HOT update (partial indexes name the
-- status), so the (queue, status) index took a new entry at every step of
-- every delivery: measured, 12% of the machine's CPU per event under load.
-- The status counts read every row for their ages anyway. What operators
-- look up by status is the deliveries that gave up, which stay few: they
-- keep an index of their own, which no other status touches.
DROP INDEX {{deliveries}}_status_idx;
CREATE INDEX {{deliveries}}_gave_up_idx ON {{deliveries}} (queue, status)
  WHERE status IN ('failed', 'expired');
