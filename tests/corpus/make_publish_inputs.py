#!/usr/bin/env python3
"""Writes publish_inputs.json: inputs of the publish function and the C++
producer API, each with the outcome both must give (accepted or refused).

Regenerate after changing a case:
    python3 tests/corpus/make_publish_inputs.py > tests/corpus/publish_inputs.json

A case's string fields (event_type, payload, key, content_type, a header's
name or value) are either a string or a list of parts joined together: a
string, {"repeat": S, "times": N} or {"hex": "c328"} (raw bytes, which the
SQL side cannot send as text). headers is a JSON value for the SQL side
(the C++ side takes an object of strings), or {"generate": N, "name_bytes":
B, "value_bytes": V}. "only": "sql" or "cpp" marks an input the other side
cannot express; "cpp_expires_at": "max" or "min" is the C++ time_point for an
expires_at it cannot hold (infinity, after 2262, before 1677). Limits:
core/domain/event_limits.hpp and schema/008_publish_limits.sql; header names
and the trace context: core/domain/event_headers.hpp and
schema/010_trace_context.sql.
"""
import json

MiB8 = 8 * 1024 * 1024
cases = []


def rep(s, n):
    return {"repeat": s, "times": n}


def case(name, expected, event_type="t.key", payload='{"k":2}', **kw):
    c = {"name": name, "event_type": event_type, "payload": payload}
    c.update(kw)
    c["expected"] = expected
    cases.append(c)


A, R = "accepted", "refused"

# event_type
case("a plain event", A)
case("empty type", R, event_type="")
case("blank type", R, event_type="   ")
case("type of 255 bytes", A, event_type=[rep("t", 255)])
case("type of 256 bytes", R, event_type=[rep("t", 256)])
case("type of 128 two-byte characters (256 bytes)", R, event_type=[rep("\u00e9", 128)])
case("type of 127 two-byte characters (254 bytes)", A, event_type=[rep("\u00e9", 127)])
case("type with a tab", R, event_type="a\tb")
case("type with a newline", R, event_type="a\nb")
case("type with DEL", R, event_type="a\u007fb")
case("type with an emoji", A, event_type="t.\U0001F600")
case("type with a C1 character (not C0)", A, event_type="a\u0085b")
case("type of invalid UTF-8", R, event_type=["t", {"hex": "c328"}], only="cpp")
case("type with NUL", R, event_type=["t", {"hex": "00"}, "x"], only="cpp")
case("type NULL", R, event_type=None, only="sql")

# payload: JSON syntax
case("payload NULL", R, payload=None, only="sql")
case("empty payload", R, payload="")
case("unclosed object", R, payload="{nope")
case("a number as the payload", A, payload="1")
case("a string as the payload", A, payload='"str"')
case("null as the payload", A, payload="null")
case("an empty array", A, payload="[]")
case("whitespace around", A, payload=" \n{} \t")
case("trailing garbage", R, payload="{} x")
case("NaN", R, payload='{"a":NaN}')
case("Infinity", R, payload='{"a":Infinity}')
case("a comment", R, payload="/* c */ {}")
case("a trailing comma", R, payload="[1,]")
case("single quotes", R, payload="{'a':1}")
case("a leading zero", R, payload="[01]")
case("duplicate keys", A, payload='{"a":1,"a":2}')
case("a raw tab in a string", R, payload='["a\tb"]')
case("a raw newline in a string", R, payload='["a\nb"]')
case("invalid UTF-8 in a string", R, payload=['["', {"hex": "c328"}, '"]'], only="cpp")
case("a raw NUL in a string", R, payload=['["a', {"hex": "00"}, '"]'], only="cpp")
case("text/plain with a raw NUL", R, payload=["a", {"hex": "00"}, "b"],
     content_type="text/plain", only="cpp")

# payload: nesting
case("64 nested arrays", A, payload=[rep("[", 64), rep("]", 64)])
case("65 nested arrays", R, payload=[rep("[", 65), rep("]", 65)])
case("64 nested objects", A, payload=[rep('{"a":', 64), "1", rep("}", 64)])
case("65 nested objects", R, payload=[rep('{"a":', 65), "1", rep("}", 65)])
case("64 alternating arrays and objects", A, payload=[rep('[{"a":', 32), "1", rep("}]", 32)])
case("65 alternating arrays and objects", R, payload=[rep('[{"a":', 32), "[1]", rep("}]", 32)])
case("a scalar 64 levels down", A, payload=[rep("[", 64), "1", rep("]", 64)])
case("1,000 nested arrays", R, payload=[rep("[", 1000), rep("]", 1000)])
case("100,000 nested arrays", R, payload=[rep("[", 100000), rep("]", 100000)])
case("100,000 nested objects", R, payload=[rep('{"a":', 100000), "1", rep("}", 100000)])
case("100,000 unclosed arrays", R, payload=[rep("[", 100000)])
case("100,000 wide, 2 deep", A, payload=["[", rep("[1],", 100000), "1]"])
case("100,000 brackets inside a string", A, payload=['["', rep("[{", 100000), '"]'])
case("65 nested arrays with a key", R, payload=[rep("[", 65), "1", rep("]", 65)],
     key="k")

# payload: numbers
case("1e400", R, payload='{"x":1e400}')
case("-1e400", R, payload='{"x":-1e400}')
case("1e309", R, payload="[1e309]")
case("1.8e308 (a double overflows)", R, payload="[1.8e308]")
case("-1.8e308", R, payload="[-1.8e308]")
case("the largest double", A, payload="[1.7976931348623157e308]")
case("minus the largest double", A, payload="[-1.7976931348623157e308]")
case("just past the largest double", R, payload="[1.79769313486231571e308]")
case("the largest double in other digits", A, payload="[17976931348623157e292]")
case("1e-400 (rounds to 0)", A, payload="[1e-400]")
case("the smallest subnormal", A, payload="[5e-324]")
case("a 30-digit integer", A, payload="[123456789012345678901234567890]")
case("minus zero", A, payload="[-0]")
case("1E+308", A, payload="[1E+308]")
case("1e400 deep inside", R, payload='{"a":[{"b":[1,2,1e400]}]}')
case("16383 decimal places", A, payload="[1e-16383]")
case("16384 decimal places (more than a numeric holds)", R, payload="[1e-16384]")
case("zero with 20000 decimal places", R, payload="[0e-20000]")
case("1e400 as a key", A, payload='{"1e400":1}')
case("1e400 as a string", A, payload='["1e400"]')

# payload: escapes
case("\\u0000 in a string", R, payload='["a\\u0000b"]')
case("\\u0000 in a key", R, payload='{"\\u0000":1}')
case("an escaped backslash before u0000", A, payload='["a\\\\u0000b"]')
case("a surrogate pair", A, payload='["\\ud83d\\ude00"]')
case("a lone low surrogate", R, payload='["\\udc00"]')
case("a lone high surrogate", R, payload='["\\ud800"]')
case("a high surrogate before a letter", R, payload='["\\ud800\\u0041"]')
case("escaped control characters", A, payload='["\\t\\n\\u0001\\u001f"]')

# payload: size
case("a JSON string of 8 MiB", A, payload=['"', rep("p", MiB8 - 2), '"'])
case("a JSON string of 8 MiB + 1", R, payload=['"', rep("p", MiB8 - 1), '"'])
case("text/plain of 8 MiB", A, payload=[rep("p", MiB8)], content_type="text/plain")
case("text/plain of 8 MiB + 1", R, payload=[rep("p", MiB8 + 1)], content_type="text/plain")
case("text/plain that is no JSON", A, payload="not {json", content_type="text/plain")

# content_type
case("empty content type", R, content_type="")
case("blank content type", R, content_type="  ")
case("content type NULL", R, content_type=None, only="sql")
case("another JSON-like content type is not parsed", A, payload="{nope",
     content_type="application/xml")

# key
case("no key", A, key=None)
case("empty key", R, key="")
case("key of 1024 bytes", A, key=[rep("k", 1024)])
case("key of 1025 bytes", R, key=[rep("k", 1025)])
case("key of 8,000 bytes", R, key=[rep("k", 8000)])
case("key of 512 two-byte characters (1024 bytes)", A, key=[rep("\u00e9", 512)])
case("key of 513 two-byte characters (1026 bytes)", R, key=[rep("\u00e9", 513)])
case("key with a tab", R, key="a\tb")
case("key with a newline", R, key="a\nb")
case("key with DEL", R, key="a\u007f")
case("key with a space", A, key="a b")
case("key of invalid UTF-8", R, key=["k", {"hex": "ff"}], only="cpp")
case("key with NUL", R, key=["k", {"hex": "00"}], only="cpp")

# ttl_seconds
case("ttl 0", A, ttl_seconds=0)
case("ttl 60", A, ttl_seconds=60)
case("ttl -1", R, ttl_seconds=-1)
case("ttl of 100 years", A, ttl_seconds=3153600000)
case("ttl of 100 years + 1 s", R, ttl_seconds=3153600001)
case("ttl 10^10", R, ttl_seconds=10000000000)
case("ttl int64 max", R, ttl_seconds=9223372036854775807)
case("ttl int64 min", R, ttl_seconds=-9223372036854775808)

# expires_at
case("expires at the end of 2199", A, expires_at="2199-12-31T23:59:59Z")
case("expires at 2200", R, expires_at="2200-01-01T00:00:00Z")
case("expires in 2300", R, expires_at="2300-01-01T00:00:00Z", cpp_expires_at="max")
case("expires at infinity", R, expires_at="infinity", cpp_expires_at="max")
case("expires at -infinity", R, expires_at="-infinity", cpp_expires_at="min")
case("expires in the year -4000", R, expires_at="4001-01-01 00:00:00+00 BC",
     cpp_expires_at="min")
case("expires in 294276", R, expires_at="294276-12-31 00:00:00+00", cpp_expires_at="max")
case("expires at the epoch", A, expires_at="1970-01-01T00:00:00Z")
case("expires just before the epoch", R, expires_at="1969-12-31T23:59:59Z")
case("expired in 2000", A, expires_at="2000-01-01T00:00:00Z")
case("ttl and expiry together", A, ttl_seconds=60, expires_at="2199-01-01T00:00:00Z")

# headers
case("no headers", A, headers=None)
case("empty headers", A, headers={})
case("a traceparent", A,
     headers={"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"})
case("headers as an array", R, headers=[1], only="sql")
case("headers as a string", R, headers="str", only="sql")
case("a number as a header value", R, headers={"a": 1}, only="sql")
case("null as a header value", R, headers={"a": None}, only="sql")
case("an object as a header value", R, headers={"a": {"b": "c"}}, only="sql")
case("64 headers", A, headers={"generate": 64, "name_bytes": 8, "value_bytes": 1})
case("65 headers", R, headers={"generate": 65, "name_bytes": 8, "value_bytes": 1})
case("a header name of 128 bytes", A, headers={"generate": 1, "name_bytes": 128, "value_bytes": 1})
case("a header name of 129 bytes", R, headers={"generate": 1, "name_bytes": 129, "value_bytes": 1})
case("an empty header name", R, headers={"": "v"})
case("a header value of 4096 bytes", A, headers={"generate": 1, "name_bytes": 4, "value_bytes": 4096})
case("a header value of 4097 bytes", R, headers={"generate": 1, "name_bytes": 4, "value_bytes": 4097})
case("an empty header value", A, headers={"a": ""})
case("64 headers of 4096 bytes each", A,
     headers={"generate": 64, "name_bytes": 128, "value_bytes": 4096})
case("a NUL in a header value", R, headers={"a": ["x", {"hex": "00"}]}, only="cpp")
case("a header value of invalid UTF-8", R, headers={"n": ["x", {"hex": "c3"}]}, only="cpp")

# trace context and reserved names (core/domain/event_headers.hpp,
# trace_context.hpp; schema/010_trace_context.sql)
TP = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
case("a traceparent and a tracestate", A,
     headers={"traceparent": TP, "tracestate": "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"})
case("a traceparent of a later version with more fields", A,
     headers={"traceparent": "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-ab"})
case("a traceparent in uppercase hex", R,
     headers={"traceparent": "00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01"})
case("a traceparent of version ff", R,
     headers={"traceparent": "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"})
case("a traceparent of version 00 with more after it", R, headers={"traceparent": TP + "-01"})
case("a traceparent with an all-zero trace id", R,
     headers={"traceparent": "00-00000000000000000000000000000000-b7ad6b7169203331-01"})
case("a traceparent with an all-zero parent id", R,
     headers={"traceparent": "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01"})
case("a traceparent one digit short", R, headers={"traceparent": TP[:-1]})
case("an empty traceparent", R, headers={"traceparent": ""})
case("a traceparent as a number", R, headers={"traceparent": 1}, only="sql")
case("a traceparent in capitals", R, headers={"Traceparent": TP})
case("a tracestate of 32 members", A,
     headers={"tracestate": ",".join(f"k{i}=v" for i in range(32))})
case("a tracestate of 33 members", R,
     headers={"tracestate": ",".join(f"k{i}=v" for i in range(33))})
case("a tracestate of 513 bytes", R,
     headers={"tracestate": "a=" + "v" * 254 + ",b=" + "v" * 254})
case("a tracestate with an uppercase key", R, headers={"tracestate": "Rojo=1"})
case("a tracestate member without a value", R, headers={"tracestate": "rojo="})
case("a header named like the relay's ids", R, headers={"outboxDeliveryId": "1"})
case("a header x-death", R, headers={"x-death": "1"})
case("a header CC (RabbitMQ copies to other queues)", R, headers={"CC": "other"})
case("a header message_id", R, headers={"message_id": "1"})
case("a header Content-Type", R, headers={"Content-Type": "text/plain"})
case("a header named like a body field", R, headers={"payload": "p"})

json.dump(cases, __import__("sys").stdout, indent=1, ensure_ascii=True)
print()
