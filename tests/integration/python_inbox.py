#!/usr/bin/python3
"""The Python worker's inbox on the real relay, database and broker: a
handler's writes happen exactly once per delivery through a worker killed
between commit and ack (s1), resends after a delivery timeout (s2), a broker
redelivery (s3), pruning while jobs flow (s4), a handler that raises (s5)
and an outage of the inbox's database (s6). Its workers, relay, tables and
queues come from inbox_test_worker.py (Harness).

  python_inbox.py --outboxd PATH --outboxctl PATH [--only s1,s3]
                  [--bypass-inbox]  (workers without the inbox: all must fail)

Servers: OUTBOX_TEST_DB_HOST/PORT/DATABASE/USERNAME/PASSWORD, OUTBOX_TEST_AMQP_URL.
Its tables, database and queues have names of its own and are removed at
the end, as are its processes. Exit 0: every scenario passed.
"""
import argparse
import os
import signal
import sys
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import psycopg2  # noqa: E402

from inbox_test_worker import DEADLINE, Harness, Inbox, check, dsn, log_text, wait_until  # noqa: E402

N = 30


# -- the scenarios: each its own event type, queue and counter row ---------

ROUTES = {
    "s1": {"retryDelaysSeconds": [1, 1, 1], "deliveryTimeoutSeconds": 30},
    "s2": {"retryDelaysSeconds": [1] * 20, "deliveryTimeoutSeconds": 1},
    "s3": {"retryDelaysSeconds": [1, 1, 1], "deliveryTimeoutSeconds": 30},
    "s4": {"retryDelaysSeconds": [1, 1, 1], "deliveryTimeoutSeconds": 30},
    "s5": {"retryDelaysSeconds": [1, 1], "deliveryTimeoutSeconds": 30},
    "s6": {"retryDelaysSeconds": [1, 1], "deliveryTimeoutSeconds": 300},
}
COUNTER_TABLE = "CREATE TABLE {} (name text PRIMARY KEY, n int NOT NULL)"
NEW_COUNTER = "INSERT INTO {} (name, n) VALUES (%s, 0)"


def start(h, q, name, payloads, worker=True, **options):
    """The scenario's counter row, its events, and (worker) its first worker."""
    h.sql(NEW_COUNTER, (name,), [h.counter])
    h.publish(name, payloads)
    return h.worker(q, **options) if worker else None


def s1_killed_between_commit_and_ack(h, q):
    """SIGKILL after the 5th commit, before its result and ack: the job comes
    back to the restarted worker, which finds its record."""
    first = start(h, q, "s1", [{"counter": "s1"}] * N, kill_at=5)
    wait_until("the worker kills itself after its 5th commit", lambda: first.poll() is not None)
    check(first.returncode == -signal.SIGKILL, "the worker was not killed: %s" % first.returncode)
    check("event=test_hook action=kill" in log_text(first), "the kill hook did not fire")
    second = h.worker(q)
    wait_until("every s1 delivery completed", lambda: h.all_completed(q, N))
    h.expect_exact("s1", N, q)
    h.stop(second)
    check("action=completed redelivered=true" in log_text(second),
          "the restarted worker found no redelivered job recorded")


def s2_delivery_timeout_shorter_than_the_handler(h, q):
    """Timeout 1 s; the first run of every 5th delivery sleeps 2.5 s inside
    its transaction; two workers of prefetch 1: the relay resends while the
    first run holds the uncommitted record, often to the other worker."""
    payloads = [dict(counter="s2", **({"sleep_first": 2.5} if i % 5 == 0 else {}))
                for i in range(N)]
    workers = [start(h, q, "s2", payloads, prefetch=1), h.worker(q, prefetch=1)]
    wait_until("every s2 delivery completed", lambda: h.all_completed(q, N))
    h.expect_exact("s2", N, q)
    for w in workers:
        h.stop(w)
    resent = [d for d in h.deliveries(q) if d[2] >= 1]  # attempts: failed sends
    check(len(resent) >= N // 5, "only %d deliveries were sent again after a timeout (the %d "
          "slow ones at least): the scenario did not happen" % (len(resent), N // 5))
    print("  s2: %d deliveries sent more than once (attempts %s), %d repeats found recorded"
          % (len(resent), sorted(d[2] for d in resent),
             sum(log_text(w).count("event=job_repeat") for w in workers)))


def s3_broker_redelivers_after_a_connection_drop(h, q):
    """After the 10th commit the worker's sockets to the broker are shut
    down: the result and the ack are lost, RabbitMQ redelivers the job."""
    w = start(h, q, "s3", [{"counter": "s3"}] * N, drop_at=10)
    wait_until("every s3 delivery completed", lambda: h.all_completed(q, N))
    h.expect_exact("s3", N, q)
    h.stop(w)
    text = log_text(w)
    check("event=test_hook action=drop" in text and "event=broker_error" in text,
          "the connection was not dropped")
    check("action=completed redelivered=true" in text,
          "no redelivered job was found recorded (event=job_repeat ... redelivered=true)")


def s4_prune_while_jobs_flow(h, q):
    """Expired records (2 days old, keep 1 day) and fresh ones (1 hour); a
    prune of small batches runs while the jobs flow (one is redelivered
    after a dropped connection: its record must survive); the worker
    prunes too, but only after it has drained what waited in its queue."""
    old, fresh = 3000, 100
    h.sql("INSERT INTO {} (source, delivery_id, queue, job, handled_at)"
          " SELECT 'old-test', g, 'old', 'J', now() - interval '2 days'"
          " FROM generate_series(1, %s) g UNION ALL"
          " SELECT 'old-test', 100000 + g, 'old', 'J', now() - interval '1 hour'"
          " FROM generate_series(1, %s) g", (old, fresh), [h.inbox])
    start(h, q, "s4", [{"counter": "s4", "sleep": 0.05}] * N, worker=False)
    wait_until("every s4 delivery is in the queue", lambda: h.statuses(q)["dispatched"] == N)
    w = h.worker(q, drop_at=10, prune_every=0.3, keep_seconds=86400)
    pruned = {}

    def prune():
        pruned["start"] = h.count("s4")
        pruned["removed"] = Inbox(dsn(), table=h.inbox, keep_seconds=86400).prune(batch=10)
        pruned["end"] = h.count("s4")
    thread = threading.Thread(target=prune)
    wait_until("the first s4 job ran", lambda: h.count("s4") > 0)
    thread.start()
    wait_until("every s4 delivery completed", lambda: h.all_completed(q, N))
    thread.join(DEADLINE)
    h.expect_exact("s4", N, q)
    wait_until("the worker pruned", lambda: "event=inbox_pruned" in log_text(w))
    h.stop(w)
    text = log_text(w)
    print("  s4: the test's prune removed %s while the counter went from %s to %s"
          % (pruned.get("removed"), pruned.get("start"), pruned.get("end")))
    check(pruned.get("start", N) < N, "the prune did not start while jobs flowed")
    by_worker = sum(int(line.rsplit("removed=", 1)[1].split()[0])
                    for line in text.splitlines() if "event=inbox_pruned" in line)
    check(pruned.get("removed", 0) + by_worker == old, "pruned %s + %d by the worker, "
          "expected the %d expired records" % (pruned.get("removed"), by_worker, old))
    check(text.rfind("event=job_done") < text.find("event=inbox_pruned"),
          "the worker pruned before it had drained its queue")
    (expired, kept, flowing), = h.sql(
        "SELECT count(*) FILTER (WHERE handled_at < now() - interval '1 day'),"
        " count(*) FILTER (WHERE source = 'old-test' AND delivery_id > 100000),"
        " count(*) FILTER (WHERE source = '' AND delivery_id = ANY(%s)) FROM {}",
        ([d[0] for d in h.deliveries(q)],), [h.inbox])
    check(expired == 0, "%d expired records remain" % expired)
    check(kept == fresh, "%d of the %d fresh records remain" % (kept, fresh))
    check(flowing == N, "%d of the %d records of the flowing jobs remain" % (flowing, N))


def s5_handler_raises(h, q):
    """Every 3rd delivery raises RetryableError on its first run after its
    UPDATE; one more always raises JobFailed after it: the rollbacks take
    the writes and the records with them."""
    payloads = [dict(counter="s5", **({"raise_first": True} if i % 3 == 0 else {}))
                for i in range(N)] + [{"counter": "s5", "always_fail": True}]
    w = start(h, q, "s5", payloads)
    wait_until("every s5 delivery ended", lambda: h.all_completed(q, N, failed=1))
    h.expect_exact("s5", N, q)
    h.stop(w)
    retried = [d for d in h.deliveries(q) if d[1] == "completed" and d[2] >= 1]
    check(len(retried) == N // 3, "%d deliveries retried, expected %d" % (len(retried), N // 3))


def s6_inbox_database_outage(h, q):
    """The inbox's database (the test's own) stops taking connections: the
    jobs are neither run nor answered (no attempt burnt) until it comes
    back; then each runs once."""
    name = h.prefix + "db"
    h.sql("CREATE DATABASE {}", names=[name])
    h.databases.append(name)
    other = psycopg2.connect(dsn(name))
    other.autocommit = True
    try:
        Inbox(dsn(name), table=h.inbox).migrate()
        h.sql(COUNTER_TABLE, names=[h.counter], conn=other)
        h.sql(NEW_COUNTER, ("s6",), [h.counter], other)
    finally:
        other.close()
    w = h.worker(q, inbox_dsn=dsn(name))
    h.publish("s6", [{"counter": "s6"}] * 5)
    wait_until("the first 5 s6 deliveries completed", lambda: h.all_completed(q, 5))
    h.sql("ALTER DATABASE {} ALLOW_CONNECTIONS false", names=[name])
    h.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))
    h.publish("s6", [{"counter": "s6"}] * N)
    wait_until("the worker finds its inbox unavailable",
               lambda: "event=inbox_unavailable" in log_text(w) or h.statuses(q)["failed"])
    # The outage lasts 3 s more; nothing may be answered meanwhile.
    end = time.monotonic() + 3
    while time.monotonic() < end:
        st = h.statuses(q)
        check(st["completed"] == 5 and not st["failed"],
              "deliveries were answered during the outage: %s" % dict(st))
        time.sleep(0.1)
    h.sql("ALTER DATABASE {} ALLOW_CONNECTIONS true", names=[name])
    wait_until("every s6 delivery completed", lambda: h.all_completed(q, N + 5))
    other = psycopg2.connect(dsn(name))
    try:
        h.expect_exact("s6", N + 5, q, conn=other)
    finally:
        other.close()
    h.stop(w)
    text = log_text(w)
    check(text.count("event=inbox_unavailable") == 1 and "event=inbox_back" in text,
          "expected one event=inbox_unavailable and an event=inbox_back")
    check(max(d[2] for d in h.deliveries(q)) == 0, "the outage cost attempts")


SCENARIOS = {"s1": s1_killed_between_commit_and_ack,
             "s2": s2_delivery_timeout_shorter_than_the_handler,
             "s3": s3_broker_redelivers_after_a_connection_drop,
             "s4": s4_prune_while_jobs_flow,
             "s5": s5_handler_raises,
             "s6": s6_inbox_database_outage}


def run_scenario(h, name):
    t0, scenario = time.monotonic(), SCENARIOS[name]
    try:
        check(h.relay.poll() is None, "the relay exited:\n" + log_text(h.relay)[-3000:])
        scenario(h, h.prefix + name)
        print("PASS %s %s (%.1f s)" % (name, scenario.__name__, time.monotonic() - t0))
        return True
    except Exception as e:
        print("FAIL %s %s (%.1f s): %s" % (name, scenario.__name__, time.monotonic() - t0, e))
        if not isinstance(e, AssertionError):
            traceback.print_exc()
        for proc in h.processes:
            if proc.name.endswith(name):
                print("  --- %s:\n%s" % (os.path.basename(proc.log_path), log_text(proc)[-1500:]))
        return False
    finally:
        for proc in h.processes:
            if proc is not h.relay:
                h.stop(proc)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--outboxd", required=True)
    p.add_argument("--outboxctl", required=True)
    p.add_argument("--bypass-inbox", action="store_true")
    p.add_argument("--only", default="")
    args = p.parse_args()
    only = set(filter(None, args.only.split(","))) or set(SCENARIOS)
    started, failures = time.monotonic(), []
    h = Harness(args)
    try:
        inbox = Inbox(dsn(), table=h.inbox)
        inbox.migrate()
        inbox.migrate()  # idempotent
        h.sql(COUNTER_TABLE, names=[h.counter])
        h.queues = [h.prefix + name for name in SCENARIOS]
        h.start_relay({name: [dict(ROUTES[name], job="J", queue=h.prefix + name)]
                       for name in SCENARIOS})
        failures = [name for name in SCENARIOS if name in only and not run_scenario(h, name)]
    finally:
        if h.relay is not None:
            h.stop(h.relay)
        problems = h.cleanup()
    for problem in problems:
        print("CLEANUP FAILED: " + problem)
    print("%s: %d scenario(s) failed %s, %.1f s" % ("FAIL" if failures or problems else "OK",
                                                  len(failures), failures,
                                                  time.monotonic() - started))
    sys.exit(1 if failures or problems else 0)


if __name__ == "__main__":
    main()
