-- The producer's insert runs no trigger of ours. 011 made every inserting
-- transaction take a shared advisory lock (a plpgsql call and a lock per
-- statement) so that ordered routing could tell which transactions might
-- still add an older id. The events table's own ROW EXCLUSIVE lock, which
-- PostgreSQL takes for every INSERT or COPY before the id's default is
-- evaluated and keeps until the transaction ends, tells the same
-- (core/pg/routing_repository.cpp, horizon_sql). Dropped in one
-- transaction with the relay's new statement: an older relay on this
-- schema would see no inserting transaction and could route an ordered
-- event before an older one of its key that commits later.
DROP TRIGGER {{events}}_mark_inserting_trg ON {{events}};
DROP FUNCTION {{events}}_mark_inserting();
