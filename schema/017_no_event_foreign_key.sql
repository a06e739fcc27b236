-- A delivery's insert takes no lock on its event. The foreign key from
-- the deliveries to the events checked every new delivery with a query of
-- its own that locks the event's row (FOR KEY SHARE): since routing stopped
-- updating the events (015), that lock is a write of its own to the
-- event's page, about 56 bytes of WAL, and the check about a third of
-- the insert's time (docs/performance.md, "The delivery's insert takes no
-- lock on its event"). Only the router and the bulk loader insert
-- deliveries, each for an event it has just read; what the key did besides,
-- a deleted event taking its deliveries along, a trigger of each deleting
-- statement does now: one statement however many events it deletes.
--
-- Dropping the key locks both tables. The events first, as a router
-- takes them (it reads the events, then inserts deliveries): taken the
-- other way round, a routing transaction and this one could wait for
-- each other. Routers may run; producers and the relay wait behind the
-- migration for a moment, and it waits for the transactions that use
-- either table to end.
LOCK TABLE {{events}} IN ACCESS EXCLUSIVE MODE;
LOCK TABLE {{deliveries}} IN ACCESS EXCLUSIVE MODE;

-- (Found by its column, as in 016.)
DO $$
DECLARE
  v_name text;
BEGIN
  SELECT c.conname INTO v_name FROM pg_constraint c
  JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY(c.conkey)
  WHERE c.conrelid = '{{deliveries}}'::regclass AND c.contype = 'f'
    AND a.attname = 'event_id';
  IF v_name IS NOT NULL THEN
    EXECUTE format('ALTER TABLE {{deliveries}} DROP CONSTRAINT %I', v_name);
  END IF;
END
$$;

-- The deliveries of the deleted events, by the unique key's event_id
-- prefix. Retention and the admin verbs delete only events without
-- deliveries (`discard` only quarantined ones, which were never routed),
-- so for them this finds nothing; an event deleted by hand takes its
-- deliveries along, as with the key's ON DELETE CASCADE.
CREATE FUNCTION {{events}}_delete_deliveries() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM {{deliveries}} d USING gone g WHERE d.event_id = g.id;
  RETURN NULL;
END
$$;

CREATE TRIGGER {{events}}_delete_deliveries_trg
  AFTER DELETE ON {{events}}
  REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION {{events}}_delete_deliveries();

-- TRUNCATE fires no delete trigger; with the key, truncating the events
-- alone was refused. Now it takes the deliveries along, as TRUNCATE ...
-- CASCADE did.
CREATE FUNCTION {{events}}_truncate_deliveries() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE {{deliveries}};
  RETURN NULL;
END
$$;

CREATE TRIGGER {{events}}_truncate_deliveries_trg
  AFTER TRUNCATE ON {{events}}
  FOR EACH STATEMENT EXECUTE FUNCTION {{events}}_truncate_deliveries();
