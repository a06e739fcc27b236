-- Quarantine: a row that makes a routing pass fail (a future bug, or a row
-- written by hand past the publish function) is taken out of the way, so
-- one row never stops every other. An event is quarantined with a time and
-- a safe reason (SQLSTATE and pass), and routed_at set too: the router's
-- claim and its index never see it again, with no change to the hot
-- statement. A delivery the claim fails on becomes `failed` with a
-- last_error starting 'quarantined:' (no new status: a failed delivery is
-- final, no pass touches it, and `outboxctl failed/retry/forget` apply).
-- `outboxctl quarantined` lists both, `outboxctl discard` deletes events.

ALTER TABLE {{events}}
  ADD COLUMN quarantined_at timestamptz,
  ADD COLUMN quarantine_reason text;

-- Quarantined events stay few; the relay never writes an entry here.
CREATE INDEX {{events}}_quarantined_idx ON {{events}} (id)
  WHERE quarantined_at IS NOT NULL;
