// W3C Trace Context (https://www.w3.org/TR/trace-context/) in event
// headers: the rules a `traceparent` and a `tracestate` must keep, and the
// trace id the lifecycle log lines carry. The SQL side (schema/
// 010_trace_context.sql) checks the same rules: change them together.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>

namespace outbox {

/// The header names of the trace context, as W3C spells them (lowercase).
constexpr const char* traceparent_header = "traceparent";
constexpr const char* tracestate_header = "tracestate";

/// At most 32 list members and 512 bytes: what W3C asks every vendor to
/// propagate.
constexpr size_t max_tracestate_members = 32;
constexpr size_t max_tracestate_bytes = 512;

/// Why `v` is no traceparent (safe text: the rule, never the value), or
/// nullopt. Version 00 is exactly `00-<32 hex>-<16 hex>-<2 hex>`; a later
/// version (not `ff`) starts so and may go on after a `-`. Lowercase hex
/// only; neither id all zeros.
std::optional<std::string> traceparent_problem(const std::string& v);

/// Why `v` is no tracestate (safe text), or nullopt: at most 512 bytes of
/// printable ASCII, at most 32 comma-separated `key=value` members (empty
/// members are allowed and not counted), keys and values as W3C's grammar.
std::optional<std::string> tracestate_problem(const std::string& v);

/// The 32 hex digits of a valid traceparent's trace id, "" otherwise.
std::string trace_id_of(const std::string& traceparent);

/// The trace id of `headers`' traceparent, "" when it has none (or an
/// invalid one).
std::string trace_id_of(const std::map<std::string, std::string>& headers);

} // namespace outbox
