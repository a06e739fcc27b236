"""The inbox of a Python worker: a handler's database effects happen exactly
once per delivery, although the outbox delivers at least once.

    inbox = Inbox(dsn, table="outbox_inbox")      # Debian's python3-psycopg2
    inbox.migrate()                               # CREATE TABLE IF NOT EXISTS
    worker.handle("PublishStockJob", fn, inbox=inbox)   # fn(job, cursor)

For such a job the worker runs Inbox.run: ONE transaction on the inbox's
database that first records the delivery's identity (source, delivery id)
with INSERT ... ON CONFLICT DO NOTHING, then runs fn(job, cursor) with a
cursor of that same transaction, then commits. The handler's writes and the
record commit together or not at all; a delivery found recorded is not run
again (the worker answers it `completed` once more).

The identity is the delivery id: stable over retries, the relay's resends
and the broker's redeliveries of one delivery (the dispatch id is new on
every send, so it would let a resend run again). A direct job has no
delivery id: it runs in a transaction of its own, unrecorded.

Errors are described by the exception's type and PostgreSQL's SQLSTATE,
never by the server's text (it may quote values) nor the DSN.
"""
import psycopg2
from psycopg2 import sql

RAN, REPEAT = "ran", "repeat"
MARGIN_SECONDS = 3600  # added to the retention floor
DEFAULT_DELIVERY_TIMEOUT = 300  # the relay's default deliveryTimeoutSeconds
_NOT_GIVEN = object()


def describe(error):
    """`error=Type pgcode=XXXXX` (pgcode `-` when there is none)."""
    return "error=%s pgcode=%s" % (type(error).__name__,
                                   getattr(error, "pgcode", None) or "-")


class InboxUnavailable(Exception):
    """The inbox's database could not be reached, or the connection broke
    before the commit, or during it (its outcome unknown: `unknown_commit`).
    Nothing is known to have committed: the job must go back to its queue
    unanswered. str() is safe to log (type and SQLSTATE only)."""

    def __init__(self, cause, unknown_commit=False):
        super().__init__(describe(cause))
        self.why = describe(cause)
        self.unknown_commit = unknown_commit


class Inbox:
    def __init__(self, dsn, table="outbox_inbox", keep_seconds=7 * 24 * 3600,
                 source="", floor=_NOT_GIVEN):
        """`keep_seconds`: how long a record is kept (None: for ever).
        `source`: which outbox database the deliveries come from ("" while
        the relay serves one). `floor`: the least keep_seconds that is safe
        (Inbox.retention_floor; None there means no time is enough)."""
        if floor is not _NOT_GIVEN:
            if floor is None and keep_seconds is not None:
                raise ValueError(
                    "keep_seconds=%s is below the retention floor: a route to this "
                    "queue repeats its last delay without a time to live, so a "
                    "repeat may come at any time (keep_seconds=None keeps records "
                    "for ever)" % keep_seconds)
            if floor is not None and keep_seconds is not None and keep_seconds < floor:
                raise ValueError("keep_seconds=%s is below the retention floor of "
                                 "%s seconds" % (keep_seconds, floor))
        if not isinstance(source, str):
            raise ValueError("source must be a string")
        if keep_seconds is not None and not keep_seconds > 0:
            raise ValueError("keep_seconds must be positive (or None: for ever)")
        self.dsn, self.keep_seconds, self.source = dsn, keep_seconds, source
        self.table = table
        parts = table.split(".", 1)
        self._table = sql.Identifier(*parts)
        self._index = sql.Identifier(parts[-1] + "_handled_at")  # as the C++ inbox
        self._conn = None  # the handlers' transactions (one at a time)

    # -- connections ---------------------------------------------------

    def _connect(self):
        kwargs = {} if "connect_timeout" in self.dsn else {"connect_timeout": 5}
        return psycopg2.connect(self.dsn, **kwargs)

    def _connection(self):
        """The handlers' connection, opened again when it broke."""
        if self._conn is not None and self._conn.closed:
            self._conn = None
        if self._conn is None:
            try:
                self._conn = self._connect()
            except psycopg2.Error as e:
                raise InboxUnavailable(e) from None
        return self._conn

    def _drop_connection(self):
        conn, self._conn = self._conn, None
        if conn is not None and not conn.closed:
            try:
                conn.close()
            except psycopg2.Error:
                pass

    def close(self):
        self._drop_connection()

    # -- schema --------------------------------------------------------

    def migrate(self):
        """Creates the table and its pruning index when missing (idempotent;
        an advisory lock keeps two workers migrating at once apart)."""
        conn = self._connect()
        try:
            with conn, conn.cursor() as cur:
                cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s))",
                            ("outbox_inbox:" + self.table,))
                cur.execute(sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {} ("
                    " source text NOT NULL,"
                    " delivery_id bigint NOT NULL,"
                    " queue text NOT NULL,"
                    " job text NOT NULL,"
                    " handled_at timestamptz NOT NULL DEFAULT now(),"
                    " PRIMARY KEY (source, delivery_id))").format(self._table))
                cur.execute(sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} (handled_at)")
                            .format(self._index, self._table))
        finally:
            conn.close()

    # -- the handler's transaction -------------------------------------

    def _source_of(self, job):
        # Delivery ids repeat across the databases of one cluster: a job
        # that names its database is recorded under the inbox's source and
        # that name.
        headers = getattr(job, "headers", None) or {}
        named = headers.get("outbox-database")
        if not isinstance(named, str) or not named:
            return self.source
        return self.source + "/" + named if self.source else named

    def _record(self, job, queue):
        """BEGIN (implicit) and the INSERT of the job's identity: True when
        recorded now, False when a committed record was there. Tries again
        (nothing was done yet) when a connection kept from an earlier job
        turns out broken (the server restarted meanwhile: reconnects once),
        and after a serialization failure (below)."""
        reconnected = False
        for _ in range(3):
            reused = self._conn is not None and not self._conn.closed
            conn = self._connection()
            try:
                cur = conn.cursor()
                if job.direct:  # no identity: run unrecorded
                    return cur, True
                # A concurrent copy of this delivery (another worker running
                # it) holds an uncommitted row of the same key: PostgreSQL's
                # unique index makes this INSERT wait for that transaction.
                # If it commits, ours sees the conflict and does nothing (a
                # repeat); if it rolls back, ours inserts and the handler
                # runs. Exactly once relies on that. (So at READ COMMITTED,
                # psycopg2's default; at REPEATABLE READ or SERIALIZABLE the
                # wait ends in a serialization failure instead, and the
                # INSERT in a new transaction then sees the committed row.)
                cur.execute(sql.SQL(
                    "INSERT INTO {} (source, delivery_id, queue, job)"
                    " VALUES (%s, %s, %s, %s)"
                    " ON CONFLICT (source, delivery_id) DO NOTHING").format(self._table),
                    (self._source_of(job), job.delivery_id, queue, job.job))
                return cur, cur.rowcount == 1
            except psycopg2.extensions.TransactionRollbackError as e:
                try:
                    conn.rollback()
                except psycopg2.Error:
                    self._drop_connection()
                    raise InboxUnavailable(e) from None
                last = e
            except psycopg2.Error as e:
                broken = conn.closed != 0
                self._drop_connection()
                if not (broken and reused and not reconnected):
                    raise InboxUnavailable(e) from None
                reconnected, last = True, e
        raise InboxUnavailable(last)

    def run(self, job, fn, queue=""):
        """Runs fn(job, cursor) exactly once for the job's delivery: RAN
        (committed with its record), REPEAT (recorded before: not run).
        Raises InboxUnavailable when the database cannot tell or take it;
        an exception of fn propagates after the ROLLBACK (its writes and
        the record are gone, so the next attempt runs). fn must neither
        commit nor roll back: the worker does."""
        cur, fresh = self._record(job, queue)
        conn = cur.connection
        if not fresh:
            cur.close()
            try:
                conn.rollback()  # nothing was written
            except psycopg2.Error:
                self._drop_connection()  # the record is committed: still a repeat
            return REPEAT
        try:
            fn(job, cur)
        except BaseException as e:
            cur.close()
            if conn.closed:  # the handler's error is likely the lost connection
                self._drop_connection()
                raise InboxUnavailable(e) from None
            try:
                conn.rollback()
            except psycopg2.Error as rollback_error:
                self._drop_connection()
                raise InboxUnavailable(rollback_error) from None
            raise
        cur.close()
        try:
            conn.commit()
        except psycopg2.Error as e:
            if conn.closed:  # broke during COMMIT: it may or may not have committed
                self._drop_connection()
                raise InboxUnavailable(e, unknown_commit=True) from None
            # The server refused the commit (e.g. a deferred constraint of the
            # handler's writes): rolled back, the handler's failure.
            try:
                conn.rollback()
            except psycopg2.Error:
                self._drop_connection()
            raise
        return RAN

    def ping(self):
        """Raises InboxUnavailable unless the database answers and the table
        is there (a missing table waits for its migration, like an outage)."""
        conn = self._connection()
        try:
            with conn.cursor() as cur:
                cur.execute(sql.SQL("SELECT 1 FROM {} LIMIT 0").format(self._table))
            conn.rollback()
        except psycopg2.Error as e:
            self._drop_connection()
            raise InboxUnavailable(e) from None

    # -- retention -----------------------------------------------------

    def prune(self, batch=1000):
        """Deletes records older than keep_seconds, `batch` at a time, each
        batch its own short transaction on a connection of its own; rows a
        transaction holds are skipped, so pruning never waits for a handler
        nor makes one wait long. Returns how many it removed. Raises
        psycopg2.Error when the database fails."""
        if self.keep_seconds is None:
            return 0
        if batch < 1:
            raise ValueError("batch must be at least 1")
        conn = self._connect()
        conn.autocommit = True  # each DELETE commits on its own
        removed = 0
        try:
            with conn.cursor() as cur:
                while True:
                    cur.execute(sql.SQL(
                        "DELETE FROM {t} WHERE ctid = ANY(ARRAY("
                        "SELECT ctid FROM {t}"
                        " WHERE handled_at < now() - %s * interval '1 second'"
                        " LIMIT %s FOR UPDATE SKIP LOCKED))").format(t=self._table),
                        (self.keep_seconds, batch))
                    removed += cur.rowcount
                    if cur.rowcount < batch:
                        return removed
        finally:
            conn.close()

    @staticmethod
    def retention_floor(config, queue):
        """The least keep_seconds for `queue` under the relay's config (a dict
        as config/outbox.json): the longest time after a delivery's first
        run in which a repeat of it can still arrive, over the routes to
        `queue`, plus one delivery timeout (a message requeued by the broker
        keeps its expiry) and a margin of an hour. None: no bound (a route
        repeats its last delay without a time to live). ValueError when no
        route sends to `queue`. A failed or expired delivery that an
        operator sends again (outboxctl retry) may come later than this."""
        longest, found = 0, False
        top_ttl = config.get("ttlSeconds", 0)
        for routes in config.get("routes", {}).values():
            for route in routes:
                if route.get("queue") != queue:
                    continue
                found = True
                delays = route.get("retryDelaysSeconds", [])
                timeout = route.get("deliveryTimeoutSeconds", DEFAULT_DELIVERY_TIMEOUT)
                ttl = route.get("ttlSeconds", top_ttl)
                if route.get("repeatLastDelay", False) and delays:
                    if not ttl:
                        return None  # retries until an operator steps in
                    span = ttl
                else:
                    span = sum(delays) + (len(delays) + 1) * timeout
                longest = max(longest, span + timeout)
        if not found:
            raise ValueError("no route of the config sends to queue %r" % queue)
        return longest + MARGIN_SECONDS
