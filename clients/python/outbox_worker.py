#!/usr/bin/python3
"""An outbox worker in Python, written from the README's wire contract alone
with Debian's python3-pika: it proves a worker needs no C++.

As a library:   w = Worker(url, "stock.publish"); w.handle("PublishStockJob", fn); w.run()
As a program:   OUTBOX_AMQP_URL=... outbox_worker.py --queue QUEUE [--max-jobs N]
                [--queue-type classic|quorum]
                (or --amqp-url-file PATH; the example's scenarios, as
                tools/example_worker/main.cpp)

The URL may list the nodes of a cluster ("URL,URL"): each connect tries them
in order (pika), so a lost node is left for the next that answers. The queue
and its results queue are declared with the relay's queue type (the config's
queueType); a queue that exists with another type is refused by RabbitMQ
(406), which is logged naming the queue and retried with backoff.

A handler gets a Job (its headers are the event's, from the AMQP headers;
a valid W3C traceparent among them goes back on the result); returning
completes it, raising RetryableError asks for
a retry, raising JobFailed (or anything else) fails it. Only the reasons of
RetryableError/JobFailed are sent back; other exceptions send their type.
The result is published with a confirm before the job is acked (at least
once); a failed job is never requeued: retries belong to the outbox.

handle(job, fn, inbox=Inbox(...)) makes the handler's database effects
exactly once: fn(job, cursor) runs in one transaction with the inbox's
record of the delivery (outbox_inbox.py), a recorded delivery is answered
`completed` without running, and while the inbox's database is away its
jobs go back to the queue unanswered and the worker waits for it.
"""
import argparse
import json
import logging
import signal
import ssl
import sys
import threading
import time

import pika

# The job message and the handler's exceptions; importable from here too.
from outbox_job import (Job, JobFailed, MalformedJob, RetryableError,  # noqa: F401
                        attribution, attribution_by_properties, load_json,
                        parse_job, string_headers)
from outbox_inbox import REPEAT, InboxUnavailable, describe
from outbox_tls import TlsSetupError, amqp_parameters_list, tls_failure
from outbox_urls import BrokerListError, resolve_url


class Worker:
    def __init__(self, amqp_url, queue, prefetch=10, queue_type="classic",
                 after_commit=None, prune_every=60.0):
        """after_commit(job): called after an inbox transaction committed and
        before the result is published, for tests (a crash in between) and
        metrics; its exceptions are logged and ignored. prune_every: seconds
        between prunes of the inboxes (after the queue was once empty)."""
        self.amqp_url, self.queue, self.prefetch = amqp_url, queue, prefetch
        # x-queue-type of both queues: the relay declares them so too.
        self.queue_arguments = {"x-queue-type": queue_type}
        self.handlers, self.inboxes = {}, {}
        self.after_commit, self.prune_every = after_commit, prune_every
        self._drained, self._next_prune, self._skip_logged = False, 0.0, set()
        self.stopping = False
        self.counts = {"completed": 0, "retry": 0, "failed": 0, "malformed": 0,
                       "direct": 0, "expired": 0}
        self.log = logging.getLogger("outbox.worker")

    def handle(self, job, fn, inbox=None):
        """fn(job), or with an Inbox fn(job, cursor): exactly once per delivery."""
        self.handlers[job] = fn
        if inbox is not None:
            self.inboxes[job] = inbox
            self.counts.setdefault("repeat", 0)
            self.counts.setdefault("requeued", 0)

    def missing_handlers(self, routed_jobs):
        return sorted(set(routed_jobs) - set(self.handlers))

    def stop(self, *_):
        self.stopping = True

    def _run_handler(self, job):
        fn = self.handlers.get(job.job)
        if fn is None:
            return "failed", "no handler for this job in the worker"
        inbox = self.inboxes.get(job.job)
        try:
            if inbox is None:
                fn(job)
            elif inbox.run(job, fn, self.queue) == REPEAT:
                return "repeat", None
            return "completed", None
        except InboxUnavailable as e:
            return "unavailable", e
        except RetryableError as e:
            return "retry", str(e)[:200]
        except JobFailed as e:
            return "failed", str(e)[:200]
        except Exception as e:  # its message may quote anything: send the type
            return "failed", "handler raised " + type(e).__name__

    @staticmethod
    def _serviced(conn, fn, default):
        """Runs fn() on a thread while this one keeps the connection
        serviced: pika's BlockingConnection sends and checks heartbeats only
        inside its own calls, so a handler running past two heartbeat
        intervals would cost the connection, and the job would run again.
        Deliveries arriving meanwhile wait in the consumer's buffer."""
        box = {}
        thread = threading.Thread(target=lambda: box.setdefault("result", fn()),
                                  name="outbox-handler", daemon=True)
        thread.start()
        while thread.is_alive():
            conn.process_data_events(time_limit=0.2)
            thread.join(timeout=0.05)
        return box.get("result", default)

    def _run_serviced(self, conn, job):
        return self._serviced(conn, lambda: self._run_handler(job),
                              ("failed", "handler did not return"))

    def _inbox_outcome(self, conn, jobs, method, job, inbox, outcome, reason):
        """Settles what the inbox decided before the reply: False when the
        job went back to the queue unanswered (the worker then waits for
        the inbox's database), True when its result is to be sent."""
        if job.direct and job.job not in self._skip_logged:
            self._skip_logged.add(job.job)
            self.log.info("event=inbox_skipped_direct_job job=%s", job.job)
        if outcome == "unavailable":
            self.counts["requeued"] += 1
            jobs.basic_nack(method.delivery_tag, requeue=True)
            self._wait_for_inbox(conn, inbox, reason, job)
            return False
        if outcome == "repeat":
            self.counts["repeat"] += 1
            self.log.info("event=job_repeat outboxDeliveryId=%s action=completed "
                          "redelivered=%s", job.delivery_id,
                          str(bool(method.redelivered)).lower())
        elif outcome == "completed" and self.after_commit is not None:
            try:
                self.after_commit(job)
            except Exception as e:
                self.log.warning("event=after_commit_failed error=%s", type(e).__name__)
        return True

    def _wait_for_inbox(self, conn, inbox, cause, job):
        """Takes no job until the inbox's database answers again; the broker
        connection is serviced meanwhile (a probe runs on a thread)."""
        self.log.warning("event=inbox_unavailable queue=%r outboxDeliveryId=%s %s "
                         "commitUnknown=%s action=requeued", self.queue, job.delivery_id,
                         cause.why, str(cause.unknown_commit).lower())
        started, tries = time.monotonic(), 0
        while not self.stopping:
            tries += 1
            conn.sleep(min(0.2 * 2 ** min(tries, 5), 5.0))
            if self._serviced(conn, lambda: _probe(inbox), "no answer") is None:
                self.log.info("event=inbox_back afterSeconds=%.1f",
                              time.monotonic() - started)
                return

    def _maybe_prune(self, conn, jobs, idle):
        """Every prune_every seconds, between jobs, once the queue was seen
        empty since the start: a worker that was down first drains what
        waited for it (repeats among it find their records)."""
        if not self.inboxes:
            return
        if not self._drained:
            if not idle:
                return
            ok = jobs.queue_declare(self.queue, durable=True, passive=True)
            if ok.method.message_count:
                return
            self._drained = True
        now = time.monotonic()
        if now < self._next_prune:
            return
        self._next_prune = now + self.prune_every
        for inbox in {id(i): i for i in self.inboxes.values()}.values():
            removed = self._serviced(conn, lambda: _prune(inbox), None)
            if isinstance(removed, int):
                self.log.info("event=inbox_pruned removed=%d", removed)
            else:
                self.log.warning("event=inbox_prune_failed %s", removed)

    def _reply(self, channel, delivery, dispatch, job, outcome, reason,
               traceparent=None):
        result = {"outboxDeliveryId": delivery, "outboxDispatchId": dispatch,
                  "job": job, "outcome": outcome}
        if reason:
            result["reason"] = reason
        # The job's trace goes back in the body (as every result object
        # carries it) and as a header.
        headers = None
        if traceparent:
            result["traceparent"] = traceparent
            headers = {"traceparent": traceparent}
        # Confirm mode: raises if the broker nacks or cannot route it.
        channel.basic_publish(
            exchange="", routing_key=self.queue + ".results",
            body=json.dumps(result).encode(), mandatory=True,
            properties=pika.BasicProperties(
                content_type="application/json", delivery_mode=2,
                message_id=delivery, correlation_id=dispatch, type=job,
                headers=headers))

    def _process(self, conn, jobs, results, method, properties, body):
        try:
            job, _ = parse_job(body, string_headers(properties))
        except MalformedJob as e:
            # Settled once and never requeued (it would only fail again):
            # answered `failed` when its delivery is known, then acked.
            self.counts["malformed"] += 1
            try:
                ids = attribution(load_json(body))
            except MalformedJob:
                ids = None
            ids = ids or attribution_by_properties(properties)
            if ids is None:
                self.log.warning("event=malformed_job action=acked why=%r", str(e))
                jobs.basic_ack(method.delivery_tag)
                return
            self.log.warning("event=malformed_job outboxDeliveryId=%s action=failed "
                             "why=%r", ids[0], str(e))
            self._reply(results, *ids, "failed", str(e))
            jobs.basic_ack(method.delivery_tag)
            return
        if job.expired():
            # An ordered route's send that timed out: starting it now could
            # overlap the key's next event. Answered `retry`, unrun (the
            # relay retries it in the key's order, or ends the late send).
            self.counts["expired"] += 1
            self.log.warning("event=job_expired outboxDeliveryId=%s job=%s "
                             "action=not_started", job.delivery_id, job.job)
            self._reply(results, str(job.delivery_id), job.dispatch_id, job.job,
                        "retry", "the job message expired before a worker started it",
                        job.traceparent)
            jobs.basic_ack(method.delivery_tag)
            return
        outcome, reason = self._run_serviced(conn, job)
        inbox = self.inboxes.get(job.job)
        if inbox is not None and not self._inbox_outcome(conn, jobs, method, job,
                                                         inbox, outcome, reason):
            return
        if outcome == "repeat":
            outcome = "completed"  # its first run's result, sent again
        if job.direct:  # nobody waits for its result
            self.counts["direct"] += 1
            self.log.info("event=direct_job_done job=%s outcome=%s", job.job, outcome)
            jobs.basic_ack(method.delivery_tag)
            return
        self.counts[outcome] += 1
        trace = f" traceId={job.trace_id}" if job.trace_id else ""
        self.log.info("event=job_done outboxDeliveryId=%s job=%s lastAttempt=%s "
                      "outcome=%s%s", job.delivery_id, job.job, job.last_attempt,
                      outcome, trace)
        self._reply(results, str(job.delivery_id), job.dispatch_id, job.job,
                    outcome, reason, job.traceparent)
        jobs.basic_ack(method.delivery_tag)

    def _declare(self, channel, queue):
        try:
            channel.queue_declare(queue, durable=True, arguments=self.queue_arguments)
        except pika.exceptions.ChannelClosedByBroker as e:
            if e.reply_code == 406:  # the broker's text is not ours to log
                self.log.error("event=queue_declare_refused queue=%r why=\"exists with "
                               "another queue type (or other arguments) than %s\"",
                               queue, self.queue_arguments["x-queue-type"])
            raise

    def run(self, max_jobs=0):
        handled, failures = 0, 0
        params = amqp_parameters_list(self.amqp_url)  # TlsSetupError: a bad setting
        while not self.stopping and (max_jobs <= 0 or handled < max_jobs):
            conn = None
            try:
                conn = pika.BlockingConnection(params)
                jobs, results = conn.channel(), conn.channel()
                self._declare(jobs, self.queue)
                self._declare(results, self.queue + ".results")
                results.confirm_delivery()
                jobs.basic_qos(prefetch_count=self.prefetch)
                failures = 0
                for method, properties, body in jobs.consume(self.queue,
                                                             inactivity_timeout=0.2):
                    if self.stopping or (max_jobs > 0 and handled >= max_jobs):
                        break
                    if method is not None:
                        self._process(conn, jobs, results, method, properties, body)
                        handled += 1
                    self._maybe_prune(conn, jobs, idle=method is None)
                jobs.cancel()
                conn.close()
            # pika raises a failed certificate check as the ssl error itself.
            except (pika.exceptions.AMQPError, ssl.SSLError) as e:
                # Unacked jobs go back to the queue with the connection.
                failures += 1
                self.log.warning("event=broker_error error=%s tls=%s attempts=%d",
                                 type(e).__name__, tls_failure(e) or "-", failures)
                _close_quietly(conn)  # a refused declaration leaves it open
                time.sleep(min(0.2 * 2 ** min(failures, 5), 5.0))


def _probe(inbox):
    try:
        inbox.ping()
        return None
    except InboxUnavailable as e:
        return e.why


def _prune(inbox):
    try:
        return inbox.prune()
    except Exception as e:  # psycopg2's errors: the type and SQLSTATE only
        return describe(e)


def _close_quietly(conn):
    if conn is not None and conn.is_open:
        try:
            conn.close()
        except pika.exceptions.AMQPError:
            pass  # it broke meanwhile: nothing left to close


def scenario(job):
    """The example's behaviour, chosen by the payload's "scenario"."""
    payload = job.payload if isinstance(job.payload, dict) else {}
    name = payload.get("scenario", "ok")
    if name == "flaky" and not job.last_attempt:
        raise RetryableError("the example says: try again")
    if name == "busy":
        raise RetryableError("the example says: still busy")
    if name == "fail":
        raise JobFailed("the example says: this one fails")
    if name == "slow" and not job.last_attempt:
        time.sleep(payload.get("seconds", 6))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--amqp-url", help="only without a password (default: "
                        "$OUTBOX_AMQP_URL)")
    parser.add_argument("--amqp-url-file", metavar="PATH",
                        help="a file holding the broker URL")
    parser.add_argument("--queue", required=True)
    parser.add_argument("--jobs", default="PublishStockJob,IndexStockJob,SendConfirmationJob",
                        help="comma-separated jobs this worker runs")
    parser.add_argument("--prefetch", type=int, default=10)
    parser.add_argument("--queue-type", choices=("classic", "quorum"), default="classic",
                        help="the type the queues are declared with: the config's "
                        "queueType for this queue (default: classic)")
    parser.add_argument("--max-jobs", type=int, default=0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="ts=%(asctime)s level=%(levelname)s logger=%(name)s %(message)s")
    # pika logs its failures with OpenSSL's and the socket's own text and
    # tracebacks; our broker_error line says what happened instead.
    logging.getLogger("pika").setLevel(logging.CRITICAL)
    url = resolve_url("outbox_worker", "amqp-url", args.amqp_url,
                      args.amqp_url_file, "OUTBOX_AMQP_URL")
    try:  # a setting that cannot work stops here, not in a retry loop
        amqp_parameters_list(url)
    except TlsSetupError as e:
        print(f"outbox_worker: {e}", file=sys.stderr)
        sys.exit(2)
    except BrokerListError as e:  # our own words, never the URL
        print(f"outbox_worker: {e}", file=sys.stderr)
        sys.exit(2)
    except ValueError:  # pika's text may quote the URL's values
        print("outbox_worker: the broker URL is not a valid amqp[s]:// URL", file=sys.stderr)
        sys.exit(2)
    worker = Worker(url, args.queue, args.prefetch, args.queue_type)
    for job in filter(None, args.jobs.split(",")):
        worker.handle(job, scenario)
    signal.signal(signal.SIGTERM, worker.stop)
    signal.signal(signal.SIGINT, worker.stop)
    worker.run(args.max_jobs)
    worker.log.info("event=stopped %s", " ".join(f"{k}={v}" for k, v in worker.counts.items()))


if __name__ == "__main__":
    main()
