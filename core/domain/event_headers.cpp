#include "core/domain/event_headers.hpp"

#include <set>

#include <rapidjson/document.h>

#include "core/domain/trace_context.hpp"
#include "core/json/json_parse.hpp"

namespace outbox {

namespace {

// Lowercase without `_` and `-`: content_type, contentType and
// Content-Type are one name to a client that maps properties.
std::string folded(const std::string& name) {
  std::string out;
  for (char c : name)
    if (c != '_' && c != '-')
      out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return out;
}

std::string lower(std::string s) {
  for (auto& c : s)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return s;
}

// A case variant of a trace-context name would travel unchecked beside
// (or instead of) the real one.
bool miscased_trace_name(const std::string& name) {
  auto l = lower(name);
  return (l == traceparent_header || l == tracestate_header) && l != name;
}

} // namespace

bool is_reserved_header(const std::string& name) {
  static const std::set<std::string> names{
    "cc",          "bcc",          "contenttype", "contentencoding",
    "deliverymode", "priority",    "correlationid", "replyto",
    "expiration",  "messageid",    "timestamp",   "type",
    "userid",      "appid",        "clusterid",   "job",
    "eventtype",   "payload"};
  auto f = folded(name);
  return f.rfind("outbox", 0) == 0 || lower(name).rfind("x-", 0) == 0
         || names.count(f) > 0;
}

std::optional<std::string> header_problem(const header_map& headers) {
  // Each rule over every name before the next, in the SQL side's order.
  for (auto& kv : headers)
    if (is_reserved_header(kv.first))
      return std::string{"headers: a name is reserved by the wire contract "
                         "(outbox*, x-*, cc, bcc, the AMQP properties, job, "
                         "eventType, payload)"};
  for (auto& kv : headers)
    if (miscased_trace_name(kv.first))
      return std::string{"headers: traceparent and tracestate must be "
                         "spelled in lowercase"};
  if (auto it = headers.find(traceparent_header); it != headers.end())
    if (auto why = traceparent_problem(it->second))
      return "headers: " + *why;
  if (auto it = headers.find(tracestate_header); it != headers.end())
    if (auto why = tracestate_problem(it->second))
      return "headers: " + *why;
  return std::nullopt;
}

header_map wire_headers(const header_map& headers) {
  header_map out;
  size_t bytes = 0;
  auto take = [&](const std::string& name, const std::string& value) {
    if (bytes + name.size() + value.size() > max_wire_header_bytes)
      return;
    bytes += name.size() + value.size();
    out.emplace(name, value);
  };
  auto tp = headers.find(traceparent_header);
  if (tp != headers.end() && !traceparent_problem(tp->second))
    take(tp->first, tp->second);
  auto ts = headers.find(tracestate_header);
  if (ts != headers.end() && !tracestate_problem(ts->second))
    take(ts->first, ts->second);
  for (auto& [name, value] : headers)
    if (name != traceparent_header && name != tracestate_header
        && !is_reserved_header(name) && !miscased_trace_name(name))
      take(name, value);
  return out;
}

header_map headers_from_json(const std::string& json) {
  header_map out;
  rapidjson::Document doc;
  if (json.empty() || parse_json(json, message_json_limits, doc) || !doc.IsObject())
    return out;
  for (auto& m : doc.GetObject())
    if (m.value.IsString())
      out.emplace(std::string{m.name.GetString(), m.name.GetStringLength()},
                  std::string{m.value.GetString(), m.value.GetStringLength()});
  return out;
}

} // namespace outbox
