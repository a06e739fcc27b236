-- A late send of an ordered key (docs/ordering.md, "A late send"): when
-- the delivery timeout of a send of an ordered route runs out, the worker
-- may still be running it. Its key then stays held by a row here until the
-- send's own result arrives (late: the result handler deletes the row) or,
-- without one, until late_until: one more delivery timeout after the
-- sweep that found it. A worker refuses to start a job of an ordered route
-- past the job message's `outboxExpiresAt` (the send's delivery timeout),
-- so a send that runs at all started within its timeout, and a worker that
-- died with it gives no result: late_until bounds the hold. Meanwhile the
-- delivery itself goes on as before (a retry of it may be sent: it is the
-- same event), but the key's next delivery is not made ready.
--
-- Rows exist only for ordered deliveries whose send timed out: a handful,
-- gone within a timeout. The sweep deletes those past late_until and hands
-- their keys on.
--
-- Upgrade: nothing to stop. release_keys below reads the table; an older
-- sweeper writes no rows, so its timeouts release the key as before.

CREATE TABLE {{deliveries}}_late (
  dispatch_id  uuid PRIMARY KEY,       -- the send that timed out
  delivery_id  bigint NOT NULL,
  coalesce_key text NOT NULL,
  job          text NOT NULL,
  queue        text NOT NULL,
  timed_out_at timestamptz NOT NULL DEFAULT now(),
  late_until   timestamptz NOT NULL
);

CREATE INDEX {{deliveries}}_late_key_idx
  ON {{deliveries}}_late (coalesce_key, job, queue);
CREATE INDEX {{deliveries}}_late_until_idx ON {{deliveries}}_late (late_until);

-- As in schema/011_key_ordering.sql, but a key with a late send (a row
-- above whose late_until has not come) is held too.
CREATE OR REPLACE FUNCTION {{deliveries}}_release_keys(p_keys text[],
                                                       p_jobs text[],
                                                       p_queues text[])
RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
DECLARE
  v_bucket int;
  v_ready bigint[];
  v_queues text[];
BEGIN
  IF current_setting('transaction_isolation') <> 'read committed' THEN
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
      AND NOT EXISTS (
      SELECT 1 FROM {{deliveries}}_late l
      WHERE l.coalesce_key = k.coalesce_key AND l.job = k.job
        AND l.queue = k.queue AND l.late_until > now())
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

-- Ends the late sends $1 (dispatch ids, as text: they come from workers)
-- whose result arrived, and hands their keys on. Returns the deliveries
-- it made ready.
CREATE FUNCTION {{deliveries}}_end_late(p_dispatch_ids text[])
RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
DECLARE
  v_keys text[];
  v_jobs text[];
  v_queues text[];
BEGIN
  WITH gone AS (
    DELETE FROM {{deliveries}}_late
    WHERE dispatch_id::text = ANY (p_dispatch_ids)
    RETURNING coalesce_key, job, queue
  )
  SELECT array_agg(coalesce_key), array_agg(job), array_agg(queue)
  INTO v_keys, v_jobs, v_queues FROM gone;
  IF v_keys IS NOT NULL THEN
    RETURN QUERY SELECT {{deliveries}}_release_keys(v_keys, v_jobs, v_queues);
  END IF;
END
$$;

-- Ends the late sends whose late_until came (no result: the worker died
-- with it, or it never started), at most $1, and hands their keys on.
-- Returns how many it ended.
CREATE FUNCTION {{deliveries}}_expire_late(p_limit integer)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  v_keys text[];
  v_jobs text[];
  v_queues text[];
BEGIN
  WITH gone AS (
    DELETE FROM {{deliveries}}_late
    WHERE dispatch_id IN (SELECT dispatch_id FROM {{deliveries}}_late
                          WHERE late_until <= now()
                          ORDER BY late_until LIMIT p_limit
                          FOR UPDATE SKIP LOCKED)
    RETURNING coalesce_key, job, queue
  )
  SELECT array_agg(coalesce_key), array_agg(job), array_agg(queue)
  INTO v_keys, v_jobs, v_queues FROM gone;
  IF v_keys IS NULL THEN
    RETURN 0;
  END IF;
  PERFORM {{deliveries}}_release_keys(v_keys, v_jobs, v_queues);
  RETURN cardinality(v_keys);
END
$$;
