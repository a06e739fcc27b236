#!/usr/bin/python3
"""WAL per event of the relay's writes on the delivery's happy path (routed,
handed, completed), today's schema against three redesigns; a study for
docs/performance.md ("The handed delivery as an unlogged row"), not a
test. One connection, N events of 300 bytes through one route, the
relay's statements in batches of B, each variant twice on fresh tables
after a CHECKPOINT (the second is reported).

Usage: write_path_wal.py DATABASE_URL
DATABASE_URL names a database freshly migrated up to schema/020 (by an
`outboxctl migrate` of a commit before schema/021, which built the
unlogged partition this study weighed) with the default table names and
nothing else in it: the study truncates
the outbox tables and makes tables of its own (study_*), dropped at the
end. Needs python3-psycopg2.
"""
import json, sys, psycopg2
N, B = 3000, 100
if len(sys.argv) != 2:
    sys.exit(__doc__)
conn = psycopg2.connect(sys.argv[1])
conn.autocommit = True
cur = conn.cursor()
def q(sql, *a):
    cur.execute(sql, a)
    return cur.fetchall() if cur.description else None
def lsn():
    return q("SELECT pg_current_wal_lsn()")[0][0]
def wal_since(start):
    return q("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s)", start)[0][0]
payload = json.dumps({"sku": "x" * 280, "n": 10})  # 300 bytes
assert len(payload) == 300, len(payload)
if q("SELECT count(*) FROM outbox_events")[0][0] != 0:
    sys.exit("outbox_events is not empty: give a database of its own")

def fresh():
    q("TRUNCATE outbox_deliveries, outbox_deliveries_completed"); q("TRUNCATE outbox_events")
    q("DROP TABLE IF EXISTS study_log, study_narrow, study_routes, study_part")
    q("UPDATE outbox_events_routing SET position = 0")
    q("CHECKPOINT")

def produce():
    start = lsn()
    for i in range(N):
        q("BEGIN"); q("INSERT INTO outbox_events (event_type, payload) VALUES ('e', %s)", payload); q("COMMIT")
    return wal_since(start) / N

def ids():
    rows = [r[0] for r in q("SELECT id FROM outbox_events ORDER BY id")]
    return [rows[i:i+B] for i in range(0, len(rows), B)]

def today():
    fresh(); a = produce(); q("CHECKPOINT")
    batches = ids(); start = lsn()
    for b in batches:  # routing: deliveries inserted handed, cursor stored
        q("BEGIN")
        q("""INSERT INTO outbox_deliveries (event_id, job, queue, retry_delays,
               repeat_last_delay, delivery_timeout_seconds, merge, available_at, status,
               dispatch_id, dispatched_at, delivery_timeout_at)
             SELECT id, 'J', 'q', '{1,2}', false, 30, 'replace', now(), 'dispatched',
               gen_random_uuid(), now(), now() + interval '30 s'
             FROM unnest(%s::bigint[]) id
             ON CONFLICT (event_id, job, queue) DO NOTHING""", b)
        q("UPDATE outbox_events_routing SET position = %s, scanned = %s WHERE name = 'cursor'", b[-1], b[-1])
        q("COMMIT")
    routed = wal_since(start); start = lsn()
    for b in batches:  # completion: delete + log row
        q("""WITH gone AS (DELETE FROM outbox_deliveries d WHERE d.event_id = ANY(%s::bigint[])
               RETURNING id, event_id, job, queue, attempts, created_at, dispatched_at)
             INSERT INTO outbox_deliveries_completed (id, event_id, job, queue, attempts,
               created_at, dispatched_at) SELECT * FROM gone""", b)
    done = wal_since(start)
    return a, routed / N, done / N

def memoryless(log_index):
    """A handed delivery lives in the dispatcher's memory and the job
    message only: routing stores only
    the cursor; a completion appends a log row; a safe point (events below it
    have every delivery logged) rides in the cursor row."""
    fresh(); a = produce(); q("CHECKPOINT")
    q("""CREATE TABLE study_log (id bigint NOT NULL, event_id bigint NOT NULL,
           route smallint NOT NULL, attempts integer NOT NULL,
           created_at timestamptz NOT NULL, dispatched_at timestamptz,
           completed_at timestamptz NOT NULL DEFAULT now())""")
    q("CREATE INDEX ON study_log USING brin (completed_at, id)")
    if log_index:
        q("CREATE INDEX ON study_log (event_id)")
    q("CREATE SEQUENCE IF NOT EXISTS study_ids")
    q("CHECKPOINT")
    batches = ids(); start = lsn()
    for b in batches:
        q("BEGIN")
        q("SELECT nextval('study_ids') FROM generate_series(1, %s)", len(b))
        q("UPDATE outbox_events_routing SET position = %s, scanned = %s WHERE name = 'cursor'", b[-1], b[-1])
        q("COMMIT")
    routed = wal_since(start); start = lsn()
    for b in batches:
        q("BEGIN")
        q("""INSERT INTO study_log (id, event_id, route, attempts, created_at, dispatched_at)
             SELECT id, id, 1, 0, now(), now() FROM unnest(%s::bigint[]) id""", b)
        q("UPDATE outbox_events_routing SET open_ranges = ARRAY[%s::bigint] WHERE name = 'cursor'", b[-1])
        q("COMMIT")
    done = wal_since(start)
    return a, routed / N, done / N

def narrow():
    """The delivery row kept, narrowed: a route-snapshot id instead of the
    copied rules, no unique key (an index on event_id to find them)."""
    fresh(); a = produce(); q("CHECKPOINT")
    q("""CREATE TABLE study_narrow (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
           event_id bigint NOT NULL, route smallint NOT NULL, status text NOT NULL,
           attempts integer NOT NULL DEFAULT 0, dispatch_id uuid, available_at timestamptz,
           dispatched_at timestamptz, delivery_timeout_at timestamptz,
           created_at timestamptz NOT NULL DEFAULT now())""")
    q("CREATE INDEX ON study_narrow (event_id)")
    q("CREATE INDEX ON study_narrow (delivery_timeout_at) WHERE status = 'dispatched'")
    q("CHECKPOINT")
    batches = ids(); start = lsn()
    for b in batches:
        q("BEGIN")
        q("""INSERT INTO study_narrow (event_id, route, status, dispatch_id, available_at,
               dispatched_at, delivery_timeout_at)
             SELECT id, 1, 'dispatched', gen_random_uuid(), now(), now(), now() + interval '30 s'
             FROM unnest(%s::bigint[]) id""", b)
        q("UPDATE outbox_events_routing SET position = %s, scanned = %s WHERE name = 'cursor'", b[-1], b[-1])
        q("COMMIT")
    routed = wal_since(start); start = lsn()
    q("""CREATE TABLE study_log (id bigint NOT NULL, event_id bigint NOT NULL,
           route smallint NOT NULL, attempts integer NOT NULL,
           created_at timestamptz NOT NULL, dispatched_at timestamptz,
           completed_at timestamptz NOT NULL DEFAULT now())""")
    q("CREATE INDEX ON study_log USING brin (completed_at, id)")
    start = lsn()
    for b in batches:
        q("""WITH gone AS (DELETE FROM study_narrow d WHERE d.event_id = ANY(%s::bigint[])
               RETURNING id, event_id, route, attempts, created_at, dispatched_at)
             INSERT INTO study_log (id, event_id, route, attempts, created_at, dispatched_at)
             SELECT * FROM gone""", b)
    done = wal_since(start)
    return a, routed / N, done / N

def unlogged_handed():
    """Today's delivery row and indexes, the table partitioned by a handed
    flag: handed deliveries in an UNLOGGED partition (no WAL for their
    insert or delete), everything else in a logged one; a completion
    deletes and appends the (logged) log row; the routing transaction's
    cursor update also stores the floor of the handed events."""
    fresh(); a = produce(); q("CHECKPOINT")
    q("""CREATE TABLE study_part (LIKE outbox_deliveries INCLUDING DEFAULTS,
           handed boolean NOT NULL DEFAULT false) PARTITION BY LIST (handed)""")
    q("CREATE TABLE study_part_kept PARTITION OF study_part FOR VALUES IN (false)")
    q("CREATE UNLOGGED TABLE study_part_handed PARTITION OF study_part FOR VALUES IN (true)")
    q("ALTER TABLE study_part ADD PRIMARY KEY (id, handed)")
    q("ALTER TABLE study_part ADD UNIQUE (event_id, job, queue, handed)")
    q("CREATE INDEX ON study_part (delivery_timeout_at) WHERE status = 'dispatched'")
    q("CREATE INDEX ON study_part (queue, available_at, id) WHERE status = 'pending' AND available_at IS NOT NULL")
    q("""CREATE TABLE study_log (id bigint NOT NULL, event_id bigint NOT NULL,
           job text NOT NULL, queue text NOT NULL, attempts integer NOT NULL,
           created_at timestamptz NOT NULL, dispatched_at timestamptz,
           completed_at timestamptz NOT NULL DEFAULT now())""")
    q("CREATE INDEX ON study_log USING brin (completed_at, id)")
    q("CREATE INDEX ON study_log USING brin (event_id)")
    q("CHECKPOINT")
    batches = ids(); start = lsn()
    for b in batches:
        q("BEGIN")
        q("""INSERT INTO study_part (id, event_id, job, queue, retry_delays,
               repeat_last_delay, delivery_timeout_seconds, merge, available_at, status,
               dispatch_id, dispatched_at, delivery_timeout_at, handed)
             SELECT id, id, 'J', 'q', '{1,2}', false, 30, 'replace', now(), 'dispatched',
               gen_random_uuid(), now(), now() + interval '30 s', true
             FROM unnest(%s::bigint[]) id
             ON CONFLICT (event_id, job, queue, handed) DO NOTHING""", b)
        q("UPDATE outbox_events_routing SET position = %s, scanned = %s WHERE name = 'cursor'", b[-1], b[0])
        q("COMMIT")
    routed = wal_since(start); start = lsn()
    for b in batches:
        q("""WITH gone AS (DELETE FROM study_part d WHERE d.event_id = ANY(%s::bigint[])
               RETURNING id, event_id, job, queue, attempts, created_at, dispatched_at)
             INSERT INTO study_log (id, event_id, job, queue, attempts,
               created_at, dispatched_at) SELECT * FROM gone""", b)
    done = wal_since(start)
    return a, routed / N, done / N

VARIANTS = [("today", today),
            ("narrow row, no unique key", narrow),
            ("unlogged handed partition", unlogged_handed),
            ("memoryless, log BRIN only", lambda: memoryless(False)),
            ("memoryless, log + event_id index", lambda: memoryless(True))]
print(f"{N} events of {len(payload)} bytes, batches of {B}; WAL bytes per event")
for name, f in VARIANTS:
    runs = [f() for _ in range(2)]
    a, r, d = runs[-1]
    print(f"{name:36s} A {a:6.0f}  routing {r:5.0f}  completion {d:5.0f}  relay {r+d:5.0f}  "
          f"(A+relay)/A {(a+r+d)/a:4.2f}   first run: {runs[0][1]+runs[0][2]:5.0f}")

q("DROP TABLE IF EXISTS study_log, study_narrow, study_routes, study_part")
q("DROP SEQUENCE IF EXISTS study_ids")
q("TRUNCATE outbox_deliveries, outbox_deliveries_completed"); q("TRUNCATE outbox_events")
