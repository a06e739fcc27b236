-- A queue an operator paused (`outboxctl pause QUEUE`): while its row is
-- here and its resume_at has not come, no dispatcher claims from the queue
-- and no router hands it deliveries, on any node. The pause lives in the
-- database so that every node honours it within one pass and a node that
-- restarts still does; `outboxctl resume` deletes the row, and a pause
-- given `--for` ends by itself at resume_at (the claim compares it with the
-- database's own clock; the row stays until the next pause or resume of the
-- queue, and is not shown once it has ended).
--
-- One row per paused queue, a handful at most: the claim reads it by its
-- primary key in the statement it runs anyway.
--
-- Upgrade: nothing to stop. An older dispatcher does not read the table,
-- so a pause binds only the nodes of this version.

CREATE TABLE {{deliveries}}_paused (
  queue     text PRIMARY KEY,
  paused_at timestamptz NOT NULL DEFAULT now(),
  paused_by text NOT NULL,             -- who paused it (outboxctl: user@host)
  reason    text NOT NULL DEFAULT '',
  resume_at timestamptz                -- NULL: until `outboxctl resume`
);
