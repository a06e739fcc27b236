#!/usr/bin/python3
"""Run as a program: the worker of tests/integration/python_inbox.py, the
library's Worker with an Inbox and a handler that adds one to a counter row
through the inbox's cursor. Imported: the test's Harness (its relay, its
workers, its tables and queues, their cleanup) and helpers.

What the payload asks of the worker's handler:

  {"counter": NAME}              UPDATE counter SET n = n + 1 WHERE name = NAME
  "sleep_first": S               on the delivery's first run (over every
                                 worker: a marker file), sleep S seconds
                                 inside the transaction, before the UPDATE
  "raise_first": true            on the first run, raise RetryableError after
                                 the UPDATE
  "always_fail": true            raise JobFailed after the UPDATE
  "sleep": S                     sleep S seconds after the UPDATE

Faults, after the Nth commit of this process (--kill-at, --drop-at):
SIGKILL itself, or shut down its own sockets to the broker (the ack of that
job is lost; RabbitMQ redelivers it). Logged as event=test_hook first.

Environment: OUTBOX_AMQP_URL (the broker), INBOX_TEST_DSN (the inbox's
database), INBOX_TEST_BYPASS=1: no inbox at all, the handler's writes commit
on their own (autocommit) as a handler without an inbox does; the test then
must fail, which shows it can.
"""
import argparse
import collections
import json
import logging
import os
import random
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from urllib.parse import urlsplit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))

import pika  # noqa: E402
import psycopg2  # noqa: E402
from psycopg2 import sql  # noqa: E402

from outbox_inbox import Inbox  # noqa: E402
from outbox_worker import JobFailed, RetryableError, Worker  # noqa: E402

# -- run as a program: the worker ---------------------------------------------

log = logging.getLogger("inbox.test_worker")


def first_run(marker_dir, job, what):
    """True for the first run of this delivery over all workers."""
    path = os.path.join(marker_dir, "%s-%d" % (what, job.delivery_id))
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        return True
    except FileExistsError:
        return False


def drop_broker_sockets(port):
    """Shuts down every socket of this process connected to the broker's
    port: to pika the connection is lost, to RabbitMQ the client is gone."""
    dropped = 0
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                continue
            s = socket.fromfd(fd, socket.AF_INET, socket.SOCK_STREAM)
        except OSError:
            continue
        try:
            if s.family == socket.AF_INET and s.getpeername()[1] == port:
                s.shutdown(socket.SHUT_RDWR)
                dropped += 1
        except OSError:
            pass
        finally:
            s.close()  # the duplicate only
    return dropped


def worker_main():
    p = argparse.ArgumentParser()
    p.add_argument("--queue", required=True)
    p.add_argument("--job", required=True)
    p.add_argument("--inbox-table", required=True)
    p.add_argument("--counter-table", required=True)
    p.add_argument("--marker-dir", required=True)
    p.add_argument("--prefetch", type=int, default=10)
    p.add_argument("--kill-at", type=int, default=0)
    p.add_argument("--drop-at", type=int, default=0)
    p.add_argument("--prune-every", type=float, default=60.0)
    p.add_argument("--keep-seconds", type=int, default=7 * 24 * 3600)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="ts=%(asctime)s level=%(levelname)s logger=%(name)s %(message)s")
    logging.getLogger("pika").setLevel(logging.CRITICAL)
    amqp_url, dsn = os.environ["OUTBOX_AMQP_URL"], os.environ["INBOX_TEST_DSN"]
    broker_port = urlsplit(amqp_url).port or 5672
    bypass = os.environ.get("INBOX_TEST_BYPASS") == "1"
    counter = sql.Identifier(args.counter_table)
    commits = {"n": 0}

    def hook(job):
        commits["n"] += 1
        if commits["n"] == args.kill_at:
            log.info("event=test_hook action=kill outboxDeliveryId=%s", job.delivery_id)
            logging.shutdown()
            os.kill(os.getpid(), signal.SIGKILL)
        if commits["n"] == args.drop_at:
            n = drop_broker_sockets(broker_port)
            log.info("event=test_hook action=drop outboxDeliveryId=%s sockets=%d",
                     job.delivery_id, n)

    def body(job, cur):
        payload = job.payload
        if payload.get("sleep_first") and first_run(args.marker_dir, job, "sleep"):
            time.sleep(payload["sleep_first"])
        cur.execute(sql.SQL("UPDATE {} SET n = n + 1 WHERE name = %s").format(counter),
                    (payload["counter"],))
        if payload.get("always_fail"):
            raise JobFailed("the test says: always fails")
        if payload.get("raise_first") and first_run(args.marker_dir, job, "raise"):
            raise RetryableError("the test says: the first run raises")
        if payload.get("sleep"):
            time.sleep(payload["sleep"])

    if bypass:  # what a handler without the inbox does
        state = {"conn": None}

        def plain(job):
            if state["conn"] is None or state["conn"].closed:
                state["conn"] = psycopg2.connect(dsn, connect_timeout=5)
                state["conn"].autocommit = True
            with state["conn"].cursor() as cur:
                body(job, cur)
            hook(job)

        worker = Worker(amqp_url, args.queue, args.prefetch)
        worker.handle(args.job, plain)
        log.info("event=test_worker_started inbox=bypassed")
    else:
        inbox = Inbox(dsn, table=args.inbox_table, keep_seconds=args.keep_seconds)
        worker = Worker(amqp_url, args.queue, args.prefetch, after_commit=hook,
                        prune_every=args.prune_every)
        worker.handle(args.job, body, inbox=inbox)
        log.info("event=test_worker_started inbox=on")
    signal.signal(signal.SIGTERM, worker.stop)
    worker.run()
    log.info("event=stopped %s", " ".join("%s=%s" % kv for kv in worker.counts.items()))


# -- imported: what python_inbox.py runs its scenarios with ------------------

PYTHON = "/usr/bin/python3"  # Debian's pika and psycopg2 live with it
DEADLINE = 60.0


def dsn(dbname=None):
    """A libpq key=value string of the test database (or `dbname`)."""
    env = lambda name, default="": os.environ.get(name) or default  # noqa: E731
    parts = {"host": env("OUTBOX_TEST_DB_HOST"), "port": env("OUTBOX_TEST_DB_PORT"),
             "dbname": dbname or env("OUTBOX_TEST_DB_DATABASE", "postgres"),
             "user": env("OUTBOX_TEST_DB_USERNAME", "postgres"),
             "password": env("OUTBOX_TEST_DB_PASSWORD"), "connect_timeout": "5"}
    quote = lambda v: "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"  # noqa: E731
    return " ".join("%s=%s" % (k, quote(v)) for k, v in parts.items() if v)


def wait_until(what, cond, deadline=DEADLINE):
    """Polls cond every 100 ms; AssertionError naming `what` at the deadline."""
    end = time.monotonic() + deadline
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("timed out after %.0f s waiting for: %s" % (deadline, what))
        time.sleep(0.1)


def check(ok, message):
    if not ok:
        raise AssertionError(message)


def log_text(proc):
    with open(proc.log_path, errors="replace") as f:
        return f.read()


class Harness:
    def __init__(self, args):
        self.args = args
        self.prefix = "pyinbox_%d_%05d_" % (os.getpid() % 100000, random.randrange(100000))
        self.tmp = tempfile.mkdtemp(prefix=self.prefix)  # mode 0700
        self.amqp_url = os.environ.get("OUTBOX_TEST_AMQP_URL")
        check(os.environ.get("OUTBOX_TEST_DB_HOST") and self.amqp_url,
              "OUTBOX_TEST_DB_* and OUTBOX_TEST_AMQP_URL must name the test servers")
        self.db = psycopg2.connect(dsn())
        self.db.autocommit = True
        self.processes, self.queues, self.databases, self.relay = [], [], [], None
        self.inbox, self.counter = self.prefix + "inbox", self.prefix + "counter"
        self.deliveries_table = self.prefix + "deliveries"

    def sql(self, text, params=(), names=(), conn=None):
        """Runs `text` with {} as the quoted `names`; its rows, if any."""
        with (conn or self.db).cursor() as cur:
            cur.execute(sql.SQL(text).format(*map(sql.Identifier, names)), params)
            return cur.fetchall() if cur.description else None

    def start_relay(self, routes):
        """Migrates the relay's tables of this test and starts outboxd."""
        config = {"databaseUrl": dsn(), "amqpUrl": self.amqp_url, "routes": routes,
                  "eventsTableName": self.prefix + "events",
                  "deliveriesTableName": self.deliveries_table,
                  "migrationsTableName": self.prefix + "migrations",
                  "publishFunctionName": self.prefix + "publish"}
        path = os.path.join(self.tmp, "outbox.json")  # holds the password: 0600
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
            json.dump(config, f)
        out = subprocess.run([self.args.outboxctl, "migrate", "--config", path],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        check(out.returncode == 0, "outboxctl migrate failed: %s" % out.stdout[-2000:])
        with socket.socket() as s:  # a free port for its status listener
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.relay = self.spawn("relay", [self.args.outboxd, "--config", path,
                                          "--listen", "127.0.0.1:%d" % port])

    def publish(self, event_type, payloads):
        for payload in payloads:
            self.sql("SELECT {}(%s, %s)", (event_type, json.dumps(payload)),
                     [self.prefix + "publish"])

    def deliveries(self, queue):
        """(id, status, attempts) of every delivery to `queue`, completed
        ones included (most move to the completion log)."""
        return self.sql("SELECT id, status, attempts FROM {} WHERE queue = %s UNION ALL"
                        " SELECT id, 'completed', attempts FROM {} WHERE queue = %s ORDER BY 1",
                        (queue, queue), [self.deliveries_table, self.deliveries_table + "_completed"])

    def statuses(self, queue):
        return collections.Counter(status for _, status, _ in self.deliveries(queue))

    def spawn(self, name, argv, extra_env=None):
        log_path = os.path.join(self.tmp, "%s-%d.log" % (name, len(self.processes)))
        with open(log_path, "w") as log:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT,
                                    env=dict(os.environ, **(extra_env or {})))
        proc.log_path, proc.name = log_path, name
        self.processes.append(proc)
        return proc

    def worker(self, queue, inbox_dsn=None, **options):
        argv = [PYTHON, os.path.abspath(__file__), "--queue", queue, "--job", "J", "--inbox-table", self.inbox,
                "--counter-table", self.counter, "--marker-dir", self.tmp]
        for key, value in options.items():
            argv += ["--" + key.replace("_", "-"), str(value)]
        extra = {"OUTBOX_AMQP_URL": self.amqp_url, "INBOX_TEST_DSN": inbox_dsn or dsn(),
                 "INBOX_TEST_BYPASS": "1" if self.args.bypass_inbox else ""}
        proc = self.spawn("worker-" + queue[len(self.prefix):], argv, extra)
        wait_until("the worker on %s starts" % queue,
                   lambda: "event=test_worker_started" in log_text(proc) or proc.poll() is not None)
        check(proc.poll() is None, "the worker exited at start:\n" + log_text(proc)[-3000:])
        return proc

    @staticmethod
    def stop(proc):
        proc.terminate()  # SIGTERM: a worker stops after its job, the relay cleanly
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def count(self, name, conn=None):
        return self.sql("SELECT n FROM {} WHERE name = %s", (name,), [self.counter], conn)[0][0]

    def all_completed(self, queue, expected, failed=0):
        st = self.statuses(queue)
        others = sum(v for k, v in st.items() if k not in ("pending", "dispatched", "completed"))
        check(others == st["failed"] <= failed, "deliveries of %s ended otherwise: %s" % (queue, st))
        return st["completed"] == expected and st["failed"] == failed

    def expect_exact(self, name, expected, queue, conn=None):
        n = self.count(name, conn)
        check(n == expected, "counter %s is %d, expected exactly %d (statuses of %s: %s)"
              % (name, n, expected, queue, dict(self.statuses(queue))))

    def cleanup(self):
        """Stops what is left; drops every object named with the prefix (the
        relay's too, whatever its migrations made), the database, the queues."""
        for proc in self.processes:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        problems = []
        try:  # aggregates before their functions; identity sequences go with tables
            for what, _ in self.sql(
                    "SELECT 'AGGREGATE ' || oid::regprocedure, 1 FROM pg_proc"
                    " WHERE left(proname, %(n)s) = %(p)s AND prokind = 'a' UNION ALL"
                    " SELECT 'FUNCTION ' || oid::regprocedure, 2 FROM pg_proc"
                    " WHERE left(proname, %(n)s) = %(p)s AND prokind <> 'a' UNION ALL"
                    " SELECT 'TABLE ' || oid::regclass, 3 FROM pg_class"
                    " WHERE left(relname, %(n)s) = %(p)s AND relkind IN ('r', 'p') ORDER BY 2",
                    {"n": len(self.prefix), "p": self.prefix}):
                with self.db.cursor() as cur:
                    cur.execute("DROP %s IF EXISTS %s CASCADE" % tuple(what.split(" ", 1)))
            for db in self.databases:
                self.sql("DROP DATABASE IF EXISTS {} WITH (FORCE)", names=[db])
        except psycopg2.Error as e:
            problems.append("dropping the test's objects: %s %s" % (type(e).__name__, e.pgcode))
        try:
            conn = pika.BlockingConnection(pika.URLParameters(self.amqp_url))
            ch = conn.channel()
            for q in self.queues:
                ch.queue_delete(q)
                ch.queue_delete(q + ".results")
            conn.close()
        except pika.exceptions.AMQPError as e:
            problems.append("deleting the test's queues: %s" % type(e).__name__)
        self.db.close()
        shutil.rmtree(self.tmp, ignore_errors=True)
        return problems


if __name__ == "__main__":
    worker_main()
