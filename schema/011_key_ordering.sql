-- Per-key ordering (docs/ordering.md). On a route with `ordering: key` the
-- deliveries of one (key, job, queue) go out one at a time in event order.
-- The rule lives here, so that every dispatcher of a queue, on any node,
-- keeps it:
--
-- * A delivery of an ordered key is made "parked": pending with no
--   available_at, so it is in no index the claim reads, and the claim stays
--   what it was. A parked delivery is made ready (available_at set) only by
--   {{deliveries}}_release_keys, when nothing holds its key.
-- * A delivery holds its key while it is dispatched, pending and ready (a
--   retry waiting for its delay included), or final by failing or expiring
--   on a route with `onFailure: block` until an operator skips it.
-- * Whatever ends a hold (a result, the timeout sweep, an expiry, routing a
--   newer delivery that supersedes, an operator) calls release_keys for the
--   deliveries it changed, in the same transaction.

ALTER TABLE {{deliveries}}
  ADD COLUMN ordered boolean NOT NULL DEFAULT false,
  ADD COLUMN block_on_failure boolean NOT NULL DEFAULT false,
  -- Set by `outboxctl skip`: the delivery no longer blocks its key.
  ADD COLUMN skipped_at timestamptz,
  ALTER COLUMN available_at DROP NOT NULL;

-- The deliveries of ordered keys that hold or wait for their key. Only
-- ordered rows enter, so unordered queues never write to it.
CREATE INDEX {{deliveries}}_ordered_idx
  ON {{deliveries}} (coalesce_key, job, queue, event_id)
  WHERE ordered AND (status IN ('pending', 'dispatched')
                     OR (block_on_failure AND status IN ('failed', 'expired')
                         AND skipped_at IS NULL));

-- The deliveries that hold their key, at most one or two per key: whether a
-- key is free is one look here, however many deliveries wait behind it.
CREATE INDEX {{deliveries}}_key_holder_idx
  ON {{deliveries}} (coalesce_key, job, queue)
  WHERE ordered AND (status = 'dispatched'
                     OR (status = 'pending' AND available_at IS NOT NULL)
                     OR (block_on_failure AND status IN ('failed', 'expired')
                         AND skipped_at IS NULL));

-- Makes the next parked delivery of each (key, job, queue) given ready when
-- nothing holds that key, and returns the deliveries it made ready.
-- Idempotent: it reads the state, so any caller may run it any number of
-- times. Callers run it once, at the end of the transaction that changed
-- deliveries of those keys (release_deliveries below, by their ids).
--
-- Races are settled by a transaction-scoped advisory lock per key (keys
-- share 1,024 locks, so that a big batch cannot fill the lock table),
-- taken in one order (no deadlock between releases). Each query of this volatile
-- function takes a fresh snapshot after the locks, so it sees what another
-- release of the same key committed before it: a delivery parked by a
-- router and a head finished by a result handler at the same moment cannot
-- both miss each other. A parked head that another transaction has locked
-- is left alone (SKIP LOCKED): that transaction is changing it and releases
-- its key itself when it commits; a later delivery is never made ready in
-- its place. The dispatchers of each queue that got a ready delivery wake
-- as they do for new deliveries (core/domain/ready_notice.hpp; "release"
-- is no node's origin).
CREATE FUNCTION {{deliveries}}_release_keys(p_keys text[], p_jobs text[],
                                            p_queues text[])
RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
DECLARE
  v_bucket int;
  v_ready bigint[];
  v_queues text[];
BEGIN
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    -- Under a snapshot kept for the whole transaction it would miss what
    -- another release committed, and a key could stay waiting for good.
    RAISE EXCEPTION '{{deliveries}}_release_keys needs read committed'
      USING ERRCODE = 'OB002';
  END IF;
  FOR v_bucket IN
    SELECT DISTINCT abs(hashtext(concat_ws(E'\x1f', k, j, q)) % 1024)
    FROM unnest(p_keys, p_jobs, p_queues) AS t(k, j, q)
    ORDER BY 1
  LOOP
    PERFORM pg_advisory_xact_lock(hashtext('{{deliveries}} key lock'), v_bucket);
  END LOOP;
  WITH keys AS (
    SELECT DISTINCT * FROM unnest(p_keys, p_jobs, p_queues)
      AS t(coalesce_key, job, queue)
  ), heads AS (
    SELECT (SELECT p.id FROM {{deliveries}} p
            WHERE p.coalesce_key = k.coalesce_key AND p.job = k.job
              AND p.queue = k.queue AND p.ordered AND p.status = 'pending'
              AND p.available_at IS NULL
            ORDER BY p.event_id LIMIT 1) AS id
    FROM keys k
    WHERE NOT EXISTS (
      SELECT 1 FROM {{deliveries}} h
      WHERE h.coalesce_key = k.coalesce_key AND h.job = k.job
        AND h.queue = k.queue AND h.ordered
        AND (h.status = 'dispatched'
             OR (h.status = 'pending' AND h.available_at IS NOT NULL)
             OR (h.block_on_failure AND h.status IN ('failed', 'expired')
                 AND h.skipped_at IS NULL)))
  ), free AS (
    SELECT p.id FROM {{deliveries}} p JOIN heads USING (id)
    FOR NO KEY UPDATE OF p SKIP LOCKED
  ), ready AS (
    UPDATE {{deliveries}} d SET available_at = now()
    FROM free f
    WHERE d.id = f.id AND d.status = 'pending' AND d.available_at IS NULL
    RETURNING d.id, d.queue
  )
  SELECT array_agg(id), array_agg(DISTINCT queue) INTO v_ready, v_queues
  FROM ready;
  PERFORM pg_notify('{{deliveries}}_ready', 'release ' || q)
  FROM unnest(v_queues) AS q;
  RETURN QUERY SELECT unnest(v_ready);
END
$$;

-- release_keys for the keys of deliveries p_ids (those of ordered routes).
CREATE FUNCTION {{deliveries}}_release_deliveries(p_ids bigint[])
RETURNS SETOF bigint
LANGUAGE sql AS $$
  SELECT {{deliveries}}_release_keys(array_agg(coalesce_key), array_agg(job),
                                     array_agg(queue))
  FROM {{deliveries}} WHERE id = ANY (p_ids) AND ordered
$$;

-- Completions of ordered deliveries, the common result of an ordered queue,
-- in one round trip that also hands their keys on: the same rule as the
-- result handler's completion statement (still dispatched under the
-- result's dispatch id and job), then release_deliveries, atomic as one
-- autocommit statement. Returns the deliveries it completed.
CREATE FUNCTION {{deliveries}}_complete_ordered(p_ids bigint[],
                                                p_dispatch_ids text[],
                                                p_jobs text[])
RETURNS TABLE (id bigint, event_id bigint, job text, queue text,
               attempts integer, since_dispatch_us bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_ids bigint[];
  v_events bigint[];
  v_jobs text[];
  v_queues text[];
  v_attempts integer[];
  v_since bigint[];
BEGIN
  WITH r AS (
    SELECT * FROM unnest(p_ids, p_dispatch_ids, p_jobs) AS r(id, dispatch_id, job)
  ), completed AS (
    UPDATE {{deliveries}} d
    SET status = 'completed', completed_at = now(), finished_at = now()
    FROM r
    WHERE d.id = r.id AND d.dispatch_id::text = r.dispatch_id AND d.job = r.job
      AND d.status = (SELECT 'dispatched') AND d.ordered
    RETURNING d.id, d.event_id, d.job, d.queue, d.attempts,
      (extract(epoch FROM now() - d.dispatched_at) * 1000000)::bigint AS since
  )
  SELECT array_agg(c.id), array_agg(c.event_id), array_agg(c.job),
         array_agg(c.queue), array_agg(c.attempts), array_agg(c.since)
  INTO v_ids, v_events, v_jobs, v_queues, v_attempts, v_since
  FROM completed c;
  PERFORM {{deliveries}}_release_deliveries(v_ids);
  RETURN QUERY SELECT * FROM unnest(v_ids, v_events, v_jobs, v_queues,
                                    v_attempts, v_since);
END
$$;

-- Ordered routing needs every event of a key in id order, but an id is
-- taken at insert and becomes visible at commit. So that the router can
-- tell when every event up to an id is visible or never will be
-- (core/domain/routing_horizon.hpp), a transaction that inserts events
-- holds a shared advisory lock from before it takes an id until it ends:
-- the router reads the newest id taken, then which transactions hold the
-- lock, and waits for those to end. A statement-level BEFORE trigger runs
-- before any row of the INSERT (or COPY) evaluates its identity default,
-- whatever writes the row. Shared locks never wait for each other, and the
-- router never takes this one: producers are never blocked by it.
CREATE FUNCTION {{events}}_mark_inserting() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(hashtextextended('{{events}} inserting', 0));
  RETURN NULL;
END
$$;

CREATE TRIGGER {{events}}_mark_inserting_trg
  BEFORE INSERT ON {{events}}
  FOR EACH STATEMENT EXECUTE FUNCTION {{events}}_mark_inserting();
