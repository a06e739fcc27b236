-- The claim takes ready deliveries in (available_at, id) order. With id in
-- the dispatch index the order comes from the index itself, so a claim
-- stops after its batch under any cached plan; with (queue, available_at)
-- alone a plan cached while the table was small would sort every ready
-- delivery of the queue. The claim (available_at <= now()) and its look at
-- the next retry (available_at > now()) imply the added condition; the
-- coalescing statement does not, so it keeps to the coalesce index.
-- Building it locks writes to the table for as long as it takes.
DROP INDEX {{deliveries}}_ready_idx;
CREATE INDEX {{deliveries}}_ready_idx ON {{deliveries}} (queue, available_at, id)
  WHERE status = 'pending' AND available_at IS NOT NULL;
