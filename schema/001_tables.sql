-- The two outbox tables and the indexes of the hot queries.
-- {{events}}, {{deliveries}} are replaced by the configured table names.

CREATE TABLE {{events}} (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_type    text NOT NULL CHECK (event_type <> ''),
  payload       text NOT NULL,
  content_type  text NOT NULL DEFAULT 'application/json',
  key           text,
  expires_at    timestamptz,
  headers       jsonb,
  created_at    timestamptz NOT NULL DEFAULT now(),
  routed_at     timestamptz
);

-- Routing pass: unrouted events in id order.
CREATE INDEX {{events}}_unrouted_idx ON {{events}} (id) WHERE routed_at IS NULL;

CREATE TABLE {{deliveries}} (
  id                        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id                  bigint NOT NULL REFERENCES {{events}} (id) ON DELETE CASCADE,
  job                       text NOT NULL CHECK (job <> ''),
  queue                     text NOT NULL CHECK (queue <> ''),
  -- The route's rules, copied when the delivery is made.
  retry_delays              integer[] NOT NULL DEFAULT '{}',
  repeat_last_delay         boolean NOT NULL DEFAULT false,
  delivery_timeout_seconds  integer NOT NULL CHECK (delivery_timeout_seconds > 0),
  merge                     text NOT NULL DEFAULT 'replace'
                            CHECK (merge IN ('replace', 'json-merge', 'none')),
  status                    text NOT NULL DEFAULT 'pending'
                            CHECK (status IN ('pending', 'dispatched', 'completed',
                                              'failed', 'expired', 'superseded')),
  attempts                  integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  dispatch_id               uuid,
  available_at              timestamptz NOT NULL DEFAULT now(),
  dispatched_at             timestamptz,
  delivery_timeout_at       timestamptz,
  expires_at                timestamptz,
  coalesce_key              text,
  payload_override          text,
  superseded_by             bigint REFERENCES {{deliveries}} (id) ON DELETE SET NULL,
  completed_at              timestamptz,
  failed_at                 timestamptz,
  -- When the delivery reached any final status (pruning sorts by it).
  finished_at               timestamptz,
  last_error                text,
  created_at                timestamptz NOT NULL DEFAULT now(),
  UNIQUE (event_id, job, queue)
);

-- Dispatch pass: ready pending deliveries of one queue.
CREATE INDEX {{deliveries}}_ready_idx ON {{deliveries}} (queue, available_at)
  WHERE status = 'pending';
-- Timeout sweep: dispatched deliveries by their deadline.
CREATE INDEX {{deliveries}}_timeout_idx ON {{deliveries}} (delivery_timeout_at)
  WHERE status = 'dispatched';
-- Expiry sweep: pending deliveries with a time to live.
CREATE INDEX {{deliveries}}_expiry_idx ON {{deliveries}} (expires_at)
  WHERE status = 'pending' AND expires_at IS NOT NULL;
-- Coalescing: the waiting delivery of a key, job and queue.
CREATE INDEX {{deliveries}}_coalesce_idx ON {{deliveries}} (coalesce_key, job, queue)
  WHERE status = 'pending' AND coalesce_key IS NOT NULL;
-- Status and pruning: counts per queue and status.
CREATE INDEX {{deliveries}}_status_idx ON {{deliveries}} (queue, status);
