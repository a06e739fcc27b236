-- The producer's transaction sends no NOTIFY. PostgreSQL serialises the
-- commits of all transactions with a pending notification on one
-- cluster-wide lock, held through the commit's WAL flush, so the trigger
-- of 002 made every publishing business transaction wait for every other:
-- at 16 writers publishing ran at a third of the rate of a plain insert.
-- The router's node now finds new events by probing the unrouted ones
-- (actors/event_watcher.hpp). A relay of an older version keeps working on
-- this schema: without its wake-up it routes on its --sleep timer.
DROP TRIGGER {{events}}_notify_trg ON {{events}};
DROP FUNCTION {{events}}_notify();
