#!/usr/bin/python3
"""The worker of tests/integration/python_inbox.py: the library's Worker
with an Inbox, and a handler that adds one to a counter row through the
inbox's cursor. What the payload asks for:

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
import logging
import os
import signal
import socket
import stat
import sys
import time
from urllib.parse import urlsplit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))

import psycopg2  # noqa: E402
from psycopg2 import sql  # noqa: E402

from outbox_inbox import Inbox  # noqa: E402
from outbox_worker import JobFailed, RetryableError, Worker  # noqa: E402

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


def main():
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


if __name__ == "__main__":
    main()
