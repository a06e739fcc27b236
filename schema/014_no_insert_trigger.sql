-- The producer's insert runs no trigger of ours. 011 made every inserting
-- transaction take a shared advisory lock (a plpgsql call and a lock per
-- statement) so that ordered routing could tell which transactions might
-- still add an older id. The id's sequence tells the same: nextval() takes
-- a ROW EXCLUSIVE lock on the sequence before it hands out a value and
-- keeps it until the top-level transaction ends, and nothing else of ours
-- takes that lock (core/pg/routing_repository.cpp, horizon_sql). The
-- router reads the sequence by a name it knows, so the identity's
-- sequence is given the name PostgreSQL gives it by default, if it has
-- another.
--
-- Upgrade: stop every router before this migration. A router of an older
-- version reads the advisory lock that is gone here, sees nobody
-- inserting, and could route an ordered event before an older one of its
-- key that commits later.
DROP TRIGGER {{events}}_mark_inserting_trg ON {{events}};
DROP FUNCTION {{events}}_mark_inserting();
DO $$
DECLARE
  v_seq text := pg_get_serial_sequence('{{events}}', 'id');
BEGIN
  IF to_regclass('{{events}}_id_seq') IS DISTINCT FROM v_seq::regclass THEN
    EXECUTE format('ALTER SEQUENCE %s RENAME TO %I', v_seq, '{{events}}_id_seq');
  END IF;
END
$$;
