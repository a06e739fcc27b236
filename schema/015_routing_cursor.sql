-- Routing writes nothing to the events. Until now the router marked each
-- event it routed (routed_at) and found the unrouted ones by a partial
-- index: an update of every event row (not HOT) and an index entry every
-- producer's insert paid for. The router now walks the events by id from a
-- cursor (core/domain/routing_cursor.hpp): every id up to the stored
-- position is routed, set aside or will never exist. routed_at stays for
-- the rows routed before; nothing writes it any more.
--
-- Events of types without routes are set aside in a small table as the
-- cursor passes them (they stay unrouted, as before): a router whose
-- routes include their type routes them from there.
--
-- Upgrade: stop every router before this migration (as for 014). It waits
-- for the transactions that are inserting events to end and holds new
-- inserts until it commits, so that the position it stores has no open
-- transaction below it; unrouted events go to the set-aside table, from
-- which a router of this version routes those of its types first.

CREATE TABLE {{events}}_routing (
  name     text PRIMARY KEY,
  position bigint NOT NULL
);

CREATE TABLE {{events}}_unrouted (
  event_id   bigint PRIMARY KEY,
  event_type text NOT NULL
);
-- The router's look for the set-aside events of its types.
CREATE INDEX {{events}}_unrouted_type_idx
  ON {{events}}_unrouted (event_type, event_id);

LOCK TABLE {{events}} IN SHARE MODE;

INSERT INTO {{events}}_unrouted (event_id, event_type)
SELECT id, event_type FROM {{events}}
WHERE routed_at IS NULL AND quarantined_at IS NULL;

INSERT INTO {{events}}_routing (name, position)
SELECT 'cursor', COALESCE(max(id), 0) FROM {{events}};

DROP INDEX {{events}}_unrouted_idx;
