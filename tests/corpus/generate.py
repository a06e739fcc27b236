#!/usr/bin/env python3
"""Writes the bad-input corpus the tests run (tests/unit/core/corpus.cpp and
tests/integration/corpus.cpp): config files, flag sets, and job and result
messages. Every case names what must come back: a part of the error text
(the rule that was broken), or "ok". Run it from anywhere; it rewrites
config/, flags.json and messages.json beside itself:

    python3 tests/corpus/generate.py
"""
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
UUID = "123e4567-e89b-12d3-a456-426614174000"
SECRET = "s3cr3t-never-shown"


def route(**kw):
    r = {"job": "J", "queue": "corpus.q"}
    r.update(kw)
    return r


def with_routes(routes, **top):
    doc = {"routes": routes}
    doc.update(top)
    return doc


def one_route(**kw):
    return with_routes({"e": [route(**kw)]})


def config_cases():
    """(name, bytes, expected part of the error text or "ok")."""
    cases = []

    def add(name, doc, expect):
        data = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
        cases.append((name, data, expect))

    # Not JSON, or not an object.
    for name, text in [("empty", b""), ("open-brace", b"{"), ("close", b"}"),
                       ("array", b"[]"), ("null", b"null"), ("number", b"17"),
                       ("string", b'"routes"'), ("true", b"true"),
                       ("trailing-comma", b'{"routes": {},}'),
                       ("comment", b'{"routes": {} /* c */}'),
                       ("line-comment", b'// c\n{"routes": {}}'),
                       ("single-quotes", b"{'routes': {}}"),
                       ("nan", b'{"batchSize": NaN, "routes": {}}'),
                       ("infinity", b'{"batchSize": Infinity, "routes": {}}'),
                       ("two-values", b'{"routes": {}} {"routes": {}}'),
                       ("bom", b'\xef\xbb\xbf{"routes": {}}'),
                       ("unquoted-key", b"{routes: {}}"),
                       ("truncated-string", b'{"routes": {"e'),
                       ("bad-escape", b'{"routes": {"\\x": []}}'),
                       ("lone-surrogate", b'{"routes": {"\\ud800": []}}')]:
        expect = "the top level must be an object" if name in (
            "array", "null", "number", "string", "true") else "not valid JSON"
        add("syntax-" + name, text, expect)
    # Nesting and NUL bytes.
    for depth in (17, 100, 1000, 100000):
        add("deep-%d" % depth,
            b'{"routes": ' + b"[" * depth + b"]" * depth + b"}",
            "nested deeper than 16 levels")
    add("deep-objects", b'{"routes": ' + b'{"a":' * 5000 + b"1"
        + b"}" * 5000 + b"}", "nested deeper than 16 levels")
    add("nul-after-value", b'{"routes": {}}\x00{"batchSize": 0}',
        "contains a NUL byte")
    add("nul-in-key", b'{"rou\x00tes": {}}', "contains a NUL byte")
    add("invalid-utf8-key", b'{"routes": {"\xff": []}}', "not valid UTF-8")
    add("invalid-utf8-value", b'{"amqpUrl": "\xc3", "routes": {}}',
        "not valid UTF-8")
    add("overlong-utf8", b'{"routes": {"\xc0\xaf": []}}', "not valid UTF-8")
    # Top-level keys.
    add("missing-routes", {}, "routes: is required")
    for key in ("route", "batchsize", "BatchSize", "tables", "x" * 300):
        add("unknown-" + key[:20], with_routes({}, **{key: 1}), "unknown key")
    for key in ("batchSize", "routes", "amqpUrl"):
        text = b'{"routes": {}, "%s": %s, "%s": %s}' % (
            key.encode(), b"{}" if key == "routes" else b"1",
            key.encode(), b"{}" if key == "routes" else b"1")
        add("twice-" + key, text, "given more than once")
    add("twice-event-type",
        b'{"routes": {"e": [{"job": "A", "queue": "q"}],'
        b' "e": [{"job": "B", "queue": "q"}]}}', "given more than once")
    add("twice-route-key",
        b'{"routes": {"e": [{"job": "A", "job": "B", "queue": "q"}]}}',
        "given more than once")
    # Wrong types and ranges of every scalar key.
    ints = {"batchSize": (1, 10000), "routerLingerMs": (0, 1000),
            "routerLingerMinEvents": (1, 10000), "ttlSeconds": (0, 2**31 - 1)}
    for key, (lo, hi) in ints.items():
        for label, value in [("below", lo - 1), ("above", hi + 1),
                             ("float", 1.5), ("string", "10"),
                             ("bool", True), ("null", None), ("huge", 2**63),
                             ("array", [1])]:
            add("%s-%s" % (key, label), with_routes({}, **{key: value}), key)
        add(key + "-1e400", b'{"routes": {}, "%s": 1e400}' % key.encode(),
            "too large")
    for key in ("deliverImmediately", "enabled"):
        for label, value in [("string", "true"), ("int", 1), ("null", None),
                             ("object", {})]:
            add("%s-%s" % (key, label), with_routes({}, **{key: value}),
                key + " = ")
    for key in ("databaseUrl", "amqpUrl"):
        for label, value in [("empty", ""), ("int", 5), ("null", None),
                             ("array", ["x"])]:
            add("%s-%s" % (key, label), with_routes({}, **{key: value}),
                key + ": must be a non-empty string")
    # Schema names.
    names = ["eventsTableName", "deliveriesTableName", "migrationsTableName",
             "publishFunctionName"]
    bad_names = {"select": "keyword", "user": "keyword", "order": "keyword",
                 "table": "keyword", "from": "keyword", "where": "keyword",
                 "group": "keyword", "limit": "keyword",
                 "pg_class": "pg_", "pg_events": "pg_",
                 "Events": "lower-case", "1events": "must start",
                 "ev-ents": "may hold only", "ev ents": "may hold only",
                 'ev"ents': "may hold only", "e" * 49: "at most 48",
                 "": "non-empty", "événements": "must start"}
    for key in names:
        for i, (bad, expect) in enumerate(bad_names.items()):
            add("name-%s-%d" % (key, i), with_routes({}, **{key: bad}), expect)
    for key in names:
        add("name-int-" + key, with_routes({}, **{key: 7}), key)
    add("names-equal", with_routes({}, eventsTableName="a",
                                   deliveriesTableName="a"),
        "must be three different names")
    # Routes.
    for label, value in [("array", []), ("string", "e"), ("null", None),
                         ("int", 3)]:
        add("routes-" + label, {"routes": value}, "routes")
    for label, value in [("empty-list", []), ("object", {}),
                         ("string", "J"), ("null", None)]:
        add("route-list-" + label, with_routes({"e": value}),
            "must be a non-empty list of routes")
    for label, value in [("string", "J"), ("list", [["J"]]), ("null", [None]),
                         ("int", [1])]:
        add("route-" + label, with_routes({"e": value if label != "string"
                                           else [value]}),
            "must be an object")
    add("event-type-empty", with_routes({"": [route()]}),
        "an event type must not be empty")
    add("event-type-control", with_routes({"a\u0001b": [route()]}),
        "must not contain control characters")
    add("event-type-newline", with_routes({"a\nb": [route()]}),
        "must not contain control characters")
    add("event-type-nul", with_routes({"a\u0000b": [route()]}),
        "must not contain control characters")
    add("event-type-256", with_routes({"e" * 256: [route()]}),
        "must have at most 255 bytes")
    add("event-type-spaces", with_routes({"   ": [route()]}),
        "must not be only spaces")
    add("route-no-job", with_routes({"e": [{"queue": "q"}]}),
        ".job: is required")
    add("route-no-queue", with_routes({"e": [{"job": "J"}]}),
        ".queue: is required")
    for label, value, expect in [
            ("empty", "", "non-empty string"), ("int", 7, "non-empty string"),
            ("null", None, "non-empty string"),
            ("256", "j" * 256, "at most 255 bytes"),
            ("100k", "j" * 100000, "at most 255 bytes"),
            ("nul", "a\u0000b", "control characters"),
            ("tab", "a\tb", "control characters"),
            ("del", "a\u007fb", "control characters"),
            ("spaces", "  ", "only spaces")]:
        add("job-" + label, one_route(job=value), "job")
        cases[-1] = (cases[-1][0], cases[-1][1], expect)
    for label, value, expect in [
            ("empty", "", "non-empty string"), ("list", ["q"], "non-empty string"),
            ("248", "q" * 248, "at most 247 bytes"),
            ("amq", "amq.gen-1", "amq."), ("spaces", "   ", "only spaces"),
            ("nul", "q\u0000", "control characters"),
            ("newline", "q\n", "control characters"),
            ("esc", "q\u001b[31m", "control characters")]:
        add("queue-" + label, one_route(queue=value), expect)
    for label, value, expect in [
            ("string", "60", "list of positive integers"),
            ("zero", [0], "positive integer"), ("negative", [-5], "positive"),
            ("float", [1.5], "positive integer"), ("huge", [2**31], "positive"),
            ("nested", [[1]], "positive integer"),
            ("null", [None], "positive integer"), ("object", {}, "list")]:
        add("retry-" + label, one_route(retryDelaysSeconds=value),
            "retryDelaysSeconds")
        cases[-1] = (cases[-1][0], cases[-1][1], expect)
    for label, value in [("string", "yes"), ("int", 1), ("null", None)]:
        add("repeat-" + label, one_route(repeatLastDelay=value),
            "repeatLastDelay")
    for label, value in [("zero", 0), ("negative", -1), ("huge", 2**31),
                         ("string", "30"), ("float", 0.5)]:
        add("timeout-" + label, one_route(deliveryTimeoutSeconds=value),
            "deliveryTimeoutSeconds")
    for label, value in [("negative", -1), ("huge", 2**40), ("string", "1")]:
        add("route-ttl-" + label, one_route(ttlSeconds=value), "ttlSeconds")
    for label, value in [("bogus", "merge"), ("upper", "REPLACE"),
                         ("int", 1), ("null", None)]:
        add("merge-" + label, one_route(merge=value), "merge")
    for label, value in [("bogus", "keys"), ("upper", "KEY"), ("int", 1),
                         ("null", None)]:
        add("ordering-" + label, one_route(ordering=value), "ordering")
    for label, value in [("bogus", "stop"), ("int", 0), ("null", None)]:
        add("on-failure-" + label, one_route(ordering="key", onFailure=value),
            "onFailure")
    add("on-failure-block-unordered", one_route(onFailure="block"),
        "needs \"ordering\": \"key\"")
    add("ordering-mixed", with_routes(
        {"e": [route(ordering="key")], "f": [route()]}), "same \"ordering\"")
    add("route-unknown-key", one_route(priority=5), "unknown key")
    add("route-repeated", with_routes({"e": [route(), route()]}),
        "repeats job")
    # URLs (a password in a bad URL is never shown).
    for label, url in [("scheme", "http://u:%s@h/" % SECRET),
                       ("port", "amqp://u:%s@h:99999/" % SECRET),
                       ("port-text", "amqp://u:%s@h:abc/" % SECRET),
                       ("vhost-slash", "amqp://u:%s@h:5672/a/b" % SECRET),
                       ("garbage", "not a url %s" % SECRET)]:
        add("amqp-url-" + label, with_routes({}, amqpUrl=url), "amqpUrl")
    for label, url in [("bad-param", "host=h bogus=%s" % SECRET),
                       ("unterminated", "host='h password=%s" % SECRET),
                       ("query", "postgresql://u:%s@h/db?bogus=1" % SECRET)]:
        add("db-url-" + label, with_routes({}, databaseUrl=url), "databaseUrl")
    # Direct-publish patterns.
    for label, value, expect in [("string", "metrics.*", "must be an array"),
                                 ("empty", [""], "1 to 255 bytes"),
                                 ("long", ["m" * 256], "1 to 255 bytes"),
                                 ("int", [5], "1 to 255 bytes"),
                                 ("null", [None], "1 to 255 bytes")]:
        add("except-" + label, with_routes({}, **{"except": value}), expect)
    # Good ones, to show the corpus is not refusing everything.
    add("good-minimal", with_routes({}), "ok")
    add("good-one-route", one_route(), "ok")
    add("good-ordered", one_route(ordering="key", onFailure="block"), "ok")
    add("good-all-keys", with_routes(
        {"e": [route(retryDelaysSeconds=[1, 2], repeatLastDelay=True,
                     deliveryTimeoutSeconds=5, ttlSeconds=60,
                     merge="json-merge")]},
        batchSize=10000, routerLingerMs=0, routerLingerMinEvents=1,
        ttlSeconds=0, deliverImmediately=False, enabled=True,
        eventsTableName="user_events", **{"except": ["metrics.*"]}), "ok")
    add("good-job-255", one_route(job="j" * 255), "ok")
    add("good-queue-247", one_route(queue="q" * 247), "ok")
    add("good-unicode", with_routes({"événement": [route(job="Tâche")]}), "ok")
    add("good-deep-16", b'{"routes": {"e": [{"job": "J", "queue": "q", '
        b'"retryDelaysSeconds": [1]}]}}', "ok")
    # Queue types (issue 19): globally and per route, one type per queue.
    type_rule = 'must be "classic" or "quorum"'
    for label, value in [("bogus", "mirrored"), ("upper", "QUORUM"),
                         ("int", 1), ("null", None), ("empty", "")]:
        add("queue-type-" + label, with_routes({}, queueType=value), type_rule)
        add("route-queue-type-" + label, one_route(queueType=value), type_rule)
    add("queue-type-conflict", with_routes(
        {"e": [route(queueType="quorum")], "f": [route(job="K")]}),
        "a queue has one type")
    add("queue-type-conflict-routes", with_routes(
        {"e": [route(queueType="quorum"), route(job="K", queueType="classic")]}),
        "a queue has one type")
    # Broker lists: an entry is named by its position, never shown.
    good_url = "amqp://u:%s@h1:5672/" % SECRET
    for label, urls, expect in [
            ("empty-entry", good_url + ",,amqp://h2/", "broker 2 of 3"),
            ("trailing-comma", good_url + ",", "broker 2 of 2 is empty"),
            ("bad-second", good_url + ",http://u:%s@h2/" % SECRET, "broker 2 of 2"),
            ("bad-port", good_url + ", amqp://u:%s@h2:99999/" % SECRET, "broker 2 of 2"),
            ("too-many", ",".join([good_url] * 17), "at most 16")]:
        add("amqp-url-list-" + label, with_routes({}, amqpUrl=urls), expect)
    add("good-queue-types", with_routes(
        {"e": [route(), route(job="K", queue="corpus.classic", queueType="classic")]},
        queueType="quorum"), "ok")
    add("good-amqp-url-list", with_routes(
        {}, amqpUrl="amqp://u@h1:5672/, amqps://u@h2/?cacertfile=/ca.pem"), "ok")
    # Retention (issue 22): false, or hours per final status.
    whole_rule = "must be an object of hours per final status"
    for label, value in [("true", True), ("zero", 0), ("number", 6),
                         ("string", "6"), ("null", None), ("array", [6])]:
        add("retention-" + label, with_routes({}, retentionHours=value),
            "retentionHours = ")
        cases[-1] = (cases[-1][0], cases[-1][1], whole_rule)
    hours_rule = "must be a number of hours from 0 (keep forever) to 876000"
    for status in ("completed", "superseded", "failed", "expired"):
        for label, value in [("negative", -1), ("huge", 876001),
                             ("string", "6"), ("null", None), ("bool", True),
                             ("list", [1]), ("object", {})]:
            add("retention-%s-%s" % (status, label),
                with_routes({}, retentionHours={status: value}),
                "retentionHours.%s = " % status)
            cases[-1] = (cases[-1][0], cases[-1][1], hours_rule)
    for member in ("pending", "dispatched", "Completed", "all"):
        add("retention-unknown-" + member,
            with_routes({}, retentionHours={member: 1}),
            "retentionHours.%s: unknown key" % member)
    add("retention-1e400", b'{"routes": {}, "retentionHours": {"failed": 1e400}}',
        "too large")
    add("retention-twice",
        b'{"routes": {}, "retentionHours": {"failed": 1, "failed": 2}}',
        "retentionHours.failed: given more than once")
    add("good-retention-off", with_routes({}, retentionHours=False), "ok")
    add("good-retention-hours", with_routes({}, retentionHours={
        "completed": 0.5, "superseded": 0, "failed": 720, "expired": 876000}),
        "ok")
    add("good-retention-empty", with_routes({}, retentionHours={}), "ok")
    return cases


def flag_cases():
    """(binary, args, expected part of stderr). {config} is a good config
    file with queues qa and qb; every case must exit 2 (a usage error)."""
    out = []
    bad_caf = [
        "--scheduler.max-threads=0", "--scheduler.max-threads=-1",
        "--scheduler.max-threads=abc", "--scheduler.max-threads=100000",
        "--scheduler.max-throughput=0",
        "--work-stealing.aggressive-steal-interval=0",
        "--work-stealing.moderate-steal-interval=0",
        "--work-stealing.relaxed-steal-interval=0",
        "--work-stealing.relaxed-sleep-duration=1h",
        "--middleman.heartbeat-interval=0s", "--middleman.workers=1000",
        "--middleman.connection-timeout=0s",
        "--logger.file-name=/tmp/outbox-corpus.log", "--logger.verbosity=trace",
        "--scheduler.policy=sharing", "--openssl.cafile=/etc/passwd",
        "--config-file=/dev/zero", "--dump-config", "--stream.max-batch-delay=0s",
        "--middleman.enable-automatic-connections"]
    for arg in bad_caf:
        expect = arg.split("=")[0]
        for binary in ("outboxd", "outboxctl"):
            args = [arg, "--config", "{config}"]
            if binary == "outboxctl":
                args = args + ["status", "--db"]
            out.append((binary, args, expect))
    daemon = [
        (["--sleep=0"], "--sleep"), (["--sleep=-1"], "--sleep"),
        (["--sleep=3601"], "--sleep"), (["--sleep=abc"], "--sleep"),
        (["--sleep=1e3"], "--sleep"), (["--sleep=1", "--sleep=2"], "given more than once"),
        (["--sleep", "1", "--sleep", "2"], "given more than once"),
        (["--roles=bogus"], "unknown role"), (["--roles=router,router"], "given twice"),
        (["--roles="], None), (["--queues=qa,qa", "--roles=dispatcher"], "given twice"),
        (["--queues=nope"], "is not the queue of any route"),
        (["--queues=qa", "--roles=router"], "needs the dispatcher or results role"),
        (["--listen=127.0.0.1:0"], "port"), (["--listen=:99999"], "host must not be empty"),
        (["--listen=127.0.0.1:99999"], "port"), (["--listen=abc"], "port"),
        (["--listen=1:2:3:x"], "port"),
        (["--listen=0.0.0.0:5000"], "is not a loopback address"),
        (["--listen=10.1.2.3:5000"], "--insecure"),
        (["--tls-cert=/nonexistent.pem"], "--tls-cert, --tls-key and --tls-ca together"),
        (["--tls-ca=/nonexistent.pem", "--tls-key=/k"], "together"),
        (["--tls-cert=/c", "--tls-key=/k", "--tls-ca=/a",
          "--tls-key-passphrase-file=/nonexistent"], "--tls-key-passphrase-file"),
        (["--tls-cert=/nonexistent.pem", "--tls-key=/k", "--tls-ca=/a"],
         "cannot load the certificate"),
        (["--tls-cert=/c", "--tls-key=/k", "--tls-ca=/a", "--insecure"],
         "--insecure: contradicts"),
        (["--listen=127.0.0.1:5000", "--roles=router"], "only a node with the status role"),
        (["--join=127.0.0.1:4250"], "the status node is the one others join"),
        (["--join=nohost", "--roles=router"], "port"),
        (["--log-level=loud"], "--log-level"), (["--log-level="], "--log-level"),
        (["--bogus"], "no such option"), (["-x"], "no such option"),
        (["--config", "/dev/zero"], "is not a regular file"),
        (["--config", "/nonexistent/outbox.json"], "cannot open config file"),
        (["--config", "/tmp"], "is not a regular file"),
        (["--config", "{config}", "--config", "{config}"], "given more than once"),
        (["--config={config}", "-c", "{config}"], "given more than once"),
        (["stray-argument"], "unexpected argument"),
        (["--once=yes"], "--once"),
    ]
    for args, expect in daemon:
        if expect is None:
            continue
        full = list(args)
        if not any(a.startswith("--config") or a == "-c" for a in args):
            full = ["--config", "{config}"] + full
        out.append(("outboxd", full, expect))
    ctl = [
        (["bogus-verb"], "usage: outboxctl"), ([], "usage: outboxctl"),
        (["retry"], "retry needs delivery ids"),
        (["retry", "abc"], "ids must be positive integers"),
        (["retry", "-5"], "no such option"),
        (["retry", "0"], "ids must be positive integers"),
        (["retry", "99999999999999999999999"], "ids must be positive integers"),
        (["forget"], "exactly one delivery id"),
        (["forget", "1", "2"], "exactly one delivery id"),
        (["prune"], "--hours"), (["prune", "--hours=-1"], "--hours"),
        (["prune", "--hours=abc"], "--hours"),
        (["prune", "--hours=1", "--status=bogus"], "--status"),
        (["failed", "--limit=0"], "--limit"), (["failed", "--limit=-3"], "--limit"),
        (["status", "--connect=nohost:abc"], "port must be a number"),
        (["status", "--connect=127.0.0.1:0"], "port"),
        (["status", "--db", "--connect=127.0.0.1:1"], "--connect (with --db)"),
        (["status", "--json", "--json"], "given more than once"),
        (["status", "--queue=q"], "--queue"), (["migrate", "--limit=3"], "--limit"),
        (["failed", "--hours=1"], "--hours"),
        (["status", "--connect="], "--connect"),
        (["migrate", "extra"], "usage: outboxctl"),
        (["forget", "abc"], "delivery id"), (["retry", "--status=bogus"], "--status"),
        (["retry", "1", "--status=failed"], "ids or --status"),
        (["prune", "--hours=1e9"], "--hours"), (["expired", "--limit=abc"], "--limit"),
        (["status", "--roles=router"], "no such option"),
        (["status", "--scheduler.max-threads=0"], "--scheduler.max-threads"),
        (["failed", "--queue=q", "--queue=r"], "given more than once"),
        (["failed", "--tls-ca=/a"], "--tls-*"),
        (["status", "--db", "--tls-ca=/a"], "--tls-*"),
        (["status", "--tls-ca=/a"], "together"),
        (["status", "--tls-cert=/c", "--tls-key=/k", "--tls-ca=/a"],
         "cannot load the certificate"),
    ]
    for args, expect in ctl:
        out.append(("outboxctl", ["--config", "{config}"] + args, expect))
    return out


def result(**kw):
    r = {"outboxDeliveryId": "1", "outboxDispatchId": UUID, "job": "J",
         "outcome": "completed"}
    r.update(kw)
    return r


def job(**kw):
    j = {"job": "J", "eventType": "e", "outboxEventId": "1",
         "outboxDeliveryId": "1", "outboxDispatchId": UUID,
         "outboxLastAttempt": False, "payload": {}}
    j.update(kw)
    return j


def drop(d, key):
    d = dict(d)
    del d[key]
    return d


def message_cases():
    """(kind, body as {"text"} or {"hex"} or {"repeat", "count", "tail"},
    expected part of the refusal). Result messages are read by the result
    handler, job messages by the worker."""
    out = []

    def text(kind, name, value, expect):
        body = value if isinstance(value, str) else json.dumps(value)
        out.append({"kind": kind, "name": name, "body": {"text": body},
                    "expect": expect})

    def raw(kind, name, data, expect):
        out.append({"kind": kind, "name": name, "body": {"hex": data.hex()},
                    "expect": expect})

    def repeat(kind, name, unit, count, tail, expect, tail_count=1, head=""):
        """The body is head + unit * count + tail * tail_count."""
        out.append({"kind": kind, "name": name,
                    "body": {"head": head, "repeat": unit, "count": count,
                             "tail": tail, "tail_count": tail_count},
                    "expect": expect})

    for kind in ("result", "job"):
        for depth in (66, 100, 1000, 10000):
            repeat(kind, "deep-%d" % depth, "[", depth, "]", "nested deeper",
                   depth)
        repeat(kind, "deep-200k-open", "[", 200000, "", "nested deeper")
        repeat(kind, "many-keys", '{"k":1,', 1, '"k":2}',
               "a key is given twice")
        raw(kind, "control-bytes", b'{"job": "a\x01b"}', "not valid JSON")
        raw(kind, "latin1", b'{"job": "caf\xe9"}', "not valid UTF-8")
        raw(kind, "utf16-bom", b'\xff\xfe{}', "not valid JSON")
        raw(kind, "surrogate-escape", b'{"job": "\\udc00"}', "not valid UTF-8")
        repeat(kind, "deep-1m", "[", 1000000, "]", "nested deeper", 1000000)
        repeat(kind, "deep-objects", '{"a":', 100000, "}", "nested deeper",
               100000)
        repeat(kind, "long-string", "a", 1 << 20, "", "not valid JSON")
        raw(kind, "nul-after-value", b"{}\x00{}", "contains a NUL byte")
        raw(kind, "invalid-utf8", b'{"job": "\xff"}', "not valid UTF-8")
        raw(kind, "truncated-utf8", b'{"job": "\xe2\x82"}', "not valid UTF-8")
        for name, value in [("empty", ""), ("garbage", "nope"),
                            ("unclosed", "{"), ("nan", '{"x": NaN}'),
                            ("huge-number", '{"outboxDeliveryId": 1e400}'),
                            ("two-values", "{} {}")]:
            text(kind, name, value,
                 "too large" if name == "huge-number" else "not valid JSON")
        text(kind, "number", "17", "not a JSON object")
        text(kind, "string", '"x"', "not a JSON object")
        text(kind, "null", "null", "not a JSON object")
    # Result messages.
    text("result", "empty-array", [], "an array must hold 1 to 1000 results")
    repeat("result", "array-1001", json.dumps(result()) + ",", 1000,
           json.dumps(result()) + "]", "an array must hold 1 to 1000 results",
           head="[")
    for name, value, expect in [
            ("no-id", drop(result(), "outboxDeliveryId"), "outboxDeliveryId is missing"),
            ("id-zero", result(outboxDeliveryId="0"), "outboxDeliveryId must be"),
            ("id-negative", result(outboxDeliveryId=-4), "outboxDeliveryId must be"),
            ("id-float", result(outboxDeliveryId=1.5), "outboxDeliveryId must be"),
            ("id-text", result(outboxDeliveryId="12a"), "outboxDeliveryId must be"),
            ("id-19-digits", result(outboxDeliveryId="9" * 19), "outboxDeliveryId must be"),
            ("id-huge", result(outboxDeliveryId=2**64), "outboxDeliveryId must be"),
            ("id-bool", result(outboxDeliveryId=True), "outboxDeliveryId must be"),
            ("id-empty", result(outboxDeliveryId=""), "outboxDeliveryId must be"),
            ("reason-list", result(reason=["x"]), "reason must be a string"),
            ("no-dispatch", drop(result(), "outboxDispatchId"), "outboxDispatchId is missing"),
            ("dispatch-short", result(outboxDispatchId="123"), "must be a UUID"),
            ("dispatch-int", result(outboxDispatchId=5), "must be a string"),
            ("no-job", drop(result(), "job"), "job is missing"),
            ("job-empty", result(job=""), "job must not be empty"),
            ("job-nul", result(job="J\u0000"), "NUL"),
            ("job-int", result(job=3), "job must be a string"),
            ("no-outcome", drop(result(), "outcome"), "outcome is missing"),
            ("outcome-bogus", result(outcome="done"), "outcome must be"),
            ("outcome-upper", result(outcome="COMPLETED"), "outcome must be"),
            ("outcome-null", result(outcome=None), "outcome must be a string"),
            ("reason-int", result(reason=5), "reason must be a string"),
            ("reason-nul", result(reason="a\u0000b"), "NUL"),
            ("unknown-key", result(extra=1), "unknown key"),
            ("array-of-numbers", [1, 2], "entry 1: not a JSON object"),
            ("array-bad-entry", [result(), result(outcome="x")], "entry 2"),
            ("nested-array", [[result()]], "entry 1: not a JSON object")]:
        text("result", name, value, expect)
    text("result", "duplicate-outcome",
         '{"outboxDeliveryId":"1","outboxDispatchId":"%s","job":"J",'
         '"outcome":"failed","outcome":"completed"}' % UUID,
         "a key is given twice")
    # Job messages.
    for name, value, expect in [
            ("array", [], "not a JSON object"),
            ("no-ids", {"job": "J", "eventType": "e", "payload": {}}, "required"),
            ("no-delivery-id", drop(job(), "outboxDeliveryId"), "required"),
            ("no-dispatch-id", drop(job(), "outboxDispatchId"), "required"),
            ("dispatch-not-uuid", job(outboxDispatchId="x"), "required"),
            ("no-job", drop(job(), "job"), "required"),
            ("job-empty", job(job=""), "required"),
            ("job-int", job(job=1), "required"),
            ("job-nul", job(job="J\u0000"), "required"),
            ("no-event-id", drop(job(), "outboxEventId"), "outboxEventId"),
            ("event-id-text", job(outboxEventId="x"), "outboxEventId"),
            ("no-event-type", drop(job(), "eventType"), "eventType"),
            ("event-type-int", job(eventType=1), "eventType"),
            ("no-last-attempt", drop(job(), "outboxLastAttempt"), "outboxLastAttempt"),
            ("last-attempt-text", job(outboxLastAttempt="true"), "outboxLastAttempt"),
            ("no-payload", drop(job(), "payload"), "payload is missing"),
            ("direct-false", {"job": "J", "eventType": "e", "outboxDirect": False,
                              "payload": {}}, "outboxDirect must be true"),
            ("direct-no-job", {"eventType": "e", "outboxDirect": True,
                               "payload": {}}, "job is missing"),
            ("direct-no-payload", {"job": "J", "eventType": "e",
                                   "outboxDirect": True}, "payload is missing"),
            ("payload-deep", None, "nested deeper")]:
        if name == "payload-deep":
            body = json.dumps(job(payload=None)).replace(
                "null", "[" * 70 + "]" * 70)
            text("job", name, body, expect)
        else:
            text("job", name, value, expect)
    text("job", "duplicate-job",
         '{"job":"J","job":"K","eventType":"e","outboxEventId":"1",'
         '"outboxDeliveryId":"1","outboxDispatchId":"%s",'
         '"outboxLastAttempt":false,"payload":{}}' % UUID,
         "a key is given twice")
    return out


def main():
    config_dir = os.path.join(HERE, "config")
    shutil.rmtree(config_dir, ignore_errors=True)
    os.makedirs(config_dir)
    expected = {}
    for i, (name, data, expect) in enumerate(config_cases()):
        file_name = "%03d-%s.json" % (i, name)
        with open(os.path.join(config_dir, file_name), "wb") as f:
            f.write(data)
        expected[file_name] = expect
    with open(os.path.join(config_dir, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
    flags = [{"bin": b, "args": a, "expect": e} for b, a, e in flag_cases()]
    with open(os.path.join(HERE, "flags.json"), "w") as f:
        json.dump(flags, f, indent=1)
    with open(os.path.join(HERE, "messages.json"), "w") as f:
        json.dump(message_cases(), f, indent=1)
    print("config files: %d, flag sets: %d, messages: %d"
          % (len(expected), len(flags), len(message_cases())))


if __name__ == "__main__":
    main()
