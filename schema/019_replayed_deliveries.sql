-- A delivery an operator asked for again (`outboxctl replay`): made for a
-- retained event with its route's current rules, like a routed one, but
-- marked with when it was replayed. Its job message says so (`replayed`),
-- so that a worker can tell a replay from the first send.
--
-- A nullable column without a default: no rewrite, and a routed delivery
-- (NULL) costs no byte more (its row has a null bitmap already).
--
-- Upgrade: nothing to stop. An older router inserts NULL; an older
-- dispatcher does not read the column (its job messages then lack the
-- mark).

ALTER TABLE {{deliveries}} ADD COLUMN replayed_at timestamptz;
