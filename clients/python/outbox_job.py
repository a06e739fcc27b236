"""The job message of the wire contract, as a Python worker reads it: its
identity, payload and headers (the relay's own limits on a body), and the
exceptions a handler raises to ask for a retry or to fail the job.
"""
import datetime
import json
import re

UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                  r"[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
DIGITS = re.compile(r"^[0-9]{1,18}$")
# outboxExpiresAt, as the relay writes it (core/base/timestamp.hpp).
UTC_TIME = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
                      r"(\.[0-9]{1,9})?(Z|\+00:00)$")
# W3C Trace Context, as core/domain/trace_context.cpp checks it.
TRACEPARENT = re.compile(r"^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-.*)?$",
                         re.DOTALL)
# As the C++ worker library: bodies beyond these are refused unread.
# The relay's own rules for a job message (core/json/json_parse.hpp).
MAX_BODY_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 65


class RetryableError(Exception):
    """Raise to ask for a retry; str(e) is sent back and must be safe."""


class JobFailed(Exception):
    """Raise to fail the delivery for good; str(e) is sent back."""


class MalformedJob(Exception):
    pass


def valid_traceparent(value):
    """True for a W3C traceparent: version 00 exactly, a later one (not ff)
    may go on after a dash; neither id all zeros."""
    if not isinstance(value, str) or not TRACEPARENT.match(value):
        return False
    if value[:2] == "ff" or (value[:2] == "00" and len(value) != 55):
        return False
    return value[3:35] != "0" * 32 and value[36:52] != "0" * 16


def string_headers(properties):
    """The job message's AMQP headers (the event's headers) that are strings;
    pika hands long strings as str, or as bytes when they are no UTF-8."""
    headers = getattr(properties, "headers", None) or {}
    return {k: v for k, v in headers.items() if isinstance(v, str)}


class Job:
    def __init__(self, doc, headers=None):
        self.job = doc["job"]
        self.event_type = doc["eventType"]
        # A direct job (published without the outbox) has no ids and wants
        # no result: 0, "" and direct=True.
        self.direct = doc.get("outboxDirect") is True
        self.event_id = int(doc.get("outboxEventId", 0))
        self.delivery_id = int(doc.get("outboxDeliveryId", 0))  # idempotency key
        self.dispatch_id = doc.get("outboxDispatchId", "")      # new every send
        self.last_attempt = doc["outboxLastAttempt"]
        # Made again by an operator (outboxctl replay), not by routing.
        self.replayed = doc.get("outboxReplayed") is True
        # On an ordered route: the latest time a worker may start the job
        # (its send times out then); None on other routes.
        self.expires_at = utc_time(doc["outboxExpiresAt"]) \
            if "outboxExpiresAt" in doc else None
        self.payload = doc["payload"]
        # The event's headers, such as the W3C traceparent and tracestate.
        self.headers = headers or {}
        tp = self.headers.get("traceparent")
        self.traceparent = tp if valid_traceparent(tp) else None  # sent back

    def expired(self, now=None):
        """True once outboxExpiresAt has passed: the job must not be started
        (docs/ordering.md, "A late send")."""
        if self.expires_at is None:
            return False
        now = now or datetime.datetime.now(datetime.timezone.utc)
        return now > self.expires_at

    @property
    def trace_id(self):
        return self.traceparent[3:35] if self.traceparent else None


def utc_time(text):
    """An ISO 8601 UTC time as the relay writes it, or None."""
    if not isinstance(text, str) or not UTC_TIME.match(text):
        return None
    text = text[:-1] + "+00:00" if text.endswith("Z") else text
    whole, _, rest = text.partition(".")
    if rest:  # microseconds at most, as datetime holds them
        fraction, offset = rest[:-6], rest[-6:]
        text = whole + "." + fraction[:6].ljust(6, "0") + offset
    try:
        return datetime.datetime.fromisoformat(text)
    except ValueError:
        return None


def _id(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value > 0:
        return str(value)
    if isinstance(value, str) and DIGITS.match(value) and int(value) > 0:
        return value
    return None


def attribution(doc):
    """(delivery id, dispatch id, job) if readable, else None."""
    if not isinstance(doc, dict):
        return None
    delivery, dispatch, job = (_id(doc.get("outboxDeliveryId")),
                               doc.get("outboxDispatchId"), doc.get("job"))
    if delivery and isinstance(dispatch, str) and UUID.match(dispatch) \
            and isinstance(job, str) and job:
        return delivery, dispatch, job
    return None


def _too_deep(body):
    """True when objects/arrays in `body` (bytes) nest deeper than MAX_DEPTH
    (brackets inside strings do not count), found without parsing:
    json.loads recurses per level and raises RecursionError (or worse,
    with a raised recursion limit, overflows the C stack)."""
    data = body if isinstance(body, bytes) else body.encode()
    depth, in_string, escaped = 0, False, False
    for c in data.translate(None, _IGNORED):
        if in_string:
            if escaped:
                escaped = False
            elif c == 0x5C:  # backslash
                escaped = True
            elif c == 0x22:  # quote
                in_string = False
        elif c == 0x22:
            in_string = True
        elif c in (0x5B, 0x7B):
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif c in (0x5D, 0x7D) and depth:
            depth -= 1
    return False


# Only quotes, backslashes and brackets matter to _too_deep: dropping every
# other byte first keeps the Python loop short for ordinary messages.
_IGNORED = bytes(b for b in range(256) if b not in b'"\\[]{}')


def load_json(body):
    """The JSON document in `body`, or raises MalformedJob with a safe reason
    (never a quote of the body): too big, too deep, not UTF-8, not JSON."""
    if len(body) > MAX_BODY_BYTES:
        raise MalformedJob(f"job message: larger than {MAX_BODY_BYTES} bytes")
    if _too_deep(body):
        raise MalformedJob(f"job message: nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise MalformedJob("job message: not valid JSON")


def attribution_by_properties(properties):
    """(delivery id, dispatch id, job) from the AMQP properties the relay
    sets (message_id, correlation_id, type), for a body too broken to read."""
    if properties is None:
        return None
    return attribution({"outboxDeliveryId": properties.message_id,
                        "outboxDispatchId": properties.correlation_id,
                        "job": properties.type})


def parse_job(body, headers=None):
    doc = load_json(body)
    if not isinstance(doc, dict):
        raise MalformedJob("job message: not a JSON object")
    if "outboxDirect" in doc:
        if doc["outboxDirect"] is not True:
            raise MalformedJob("job message: outboxDirect must be true when present")
        if not isinstance(doc.get("job"), str) or not doc["job"]:
            raise MalformedJob("job message: job must be a non-empty string")
    elif attribution(doc) is None:
        raise MalformedJob("job message: outboxDeliveryId, outboxDispatchId "
                           "(a UUID) and job are required")
    if "outboxDirect" not in doc and not _id(doc.get("outboxEventId")):
        raise MalformedJob("job message: outboxEventId must be a positive integer")
    if not isinstance(doc.get("eventType"), str):
        raise MalformedJob("job message: eventType must be a string")
    if not isinstance(doc.get("outboxLastAttempt"), bool):
        raise MalformedJob("job message: outboxLastAttempt must be true or false")
    if "outboxExpiresAt" in doc and utc_time(doc["outboxExpiresAt"]) is None:
        raise MalformedJob("job message: outboxExpiresAt must be an ISO 8601 UTC "
                           "time when present")
    if "payload" not in doc:
        raise MalformedJob("job message: payload is missing")
    return Job(doc, headers), doc
