// The result message: written by a worker (one result, or a batch as
// arrays), read strictly by the outbox, each entry refused alone.
#include "core/amqp/wire.hpp"

#include <algorithm>
#include <cstring>
#include <set>

#include "core/amqp/wire_detail.hpp"
#include "core/domain/trace_context.hpp"
#include "core/json/json_parse.hpp"

namespace outbox {

using namespace wire_detail;

std::string results_queue(const std::string& queue) {
  return queue + ".results";
}

std::string parked_results_queue(const std::string& queue,
                                 const std::string& database) {
  return results_queue(queue) + "." + database;
}

namespace {

constexpr size_t max_reason_bytes = 200;

bool has_unknown_key(const rapidjson::Value& v) {
  static const std::set<std::string> known{"outboxDeliveryId",
                                           "outboxDispatchId", "job",
                                           "outcome", "reason", "traceparent"};
  for (auto& m : v.GetObject())
    if (known.count(m.name.GetString()) == 0)
      return true;
  return false;
}

// A result's traceparent is only for tracing: one that is no W3C
// traceparent is dropped (as W3C asks of a receiver) rather than costing
// the result; one that is no string makes the result malformed, as any
// mistyped field does.
std::optional<std::string> read_result_traceparent(const rapidjson::Value& v,
                                                   send_result& r) {
  auto it = v.FindMember("traceparent");
  if (it == v.MemberEnd())
    return std::nullopt;
  if (!it->value.IsString())
    return "traceparent must be a string";
  std::string tp{it->value.GetString(), it->value.GetStringLength()};
  if (!traceparent_problem(tp))
    r.traceparent = std::move(tp);
  return std::nullopt;
}

// Reads one result object; on failure, says why (safe text, no quote of
// the message).
std::optional<std::string> read_result(const rapidjson::Value& v,
                                       send_result& r) {
  if (!v.IsObject())
    return "not a JSON object";
  if (has_duplicate_keys(v))
    return "a key is given twice";
  if (has_unknown_key(v))
    return "unknown key (allowed: outboxDeliveryId, outboxDispatchId, job, "
           "outcome, reason, traceparent)";
  auto id = v.FindMember("outboxDeliveryId");
  if (id == v.MemberEnd())
    return "outboxDeliveryId is missing";
  auto parsed_id = read_id(id->value);
  if (!parsed_id)
    return "outboxDeliveryId must be a positive integer or a string of digits";
  r.delivery_id = *parsed_id;
  auto text = [&](const char* key,
                  std::string& out) -> std::optional<std::string> {
    auto it = v.FindMember(key);
    if (it == v.MemberEnd())
      return std::string{key} + " is missing";
    if (!it->value.IsString())
      return std::string{key} + " must be a string";
    out.assign(it->value.GetString(), it->value.GetStringLength());
    return std::nullopt;
  };
  if (auto why = text("outboxDispatchId", r.dispatch_id))
    return why;
  if (!is_uuid(r.dispatch_id))
    return "outboxDispatchId must be a UUID";
  // JSON allows \u0000 in job; the database's text does not, and would
  // refuse the whole batch of results on every try.
  if (auto why = read_job(v, r.job))
    return why;
  std::string outcome_text;
  if (auto why = text("outcome", outcome_text))
    return why;
  auto o = parse_outcome(outcome_text);
  if (!o)
    return "outcome must be completed, retry or failed";
  r.result = *o;
  if (auto it = v.FindMember("reason"); it != v.MemberEnd()) {
    if (!it->value.IsString() && !it->value.IsNull())
      return "reason must be a string";
    if (it->value.IsString()) {
      if (std::memchr(it->value.GetString(), 0, it->value.GetStringLength()))
        return "reason must not contain a NUL character";
      size_t n = std::min<size_t>(it->value.GetStringLength(), max_reason_bytes);
      const char* s = it->value.GetString();
      // Never cut a UTF-8 character in half: the database would refuse it.
      while (n < it->value.GetStringLength() && n > 0
             && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80)
        --n;
      r.reason.assign(s, n);
    }
  }
  return read_result_traceparent(v, r);
}

} // namespace

result_message_content read_result_message(const std::string& body) {
  result_message_content out;
  rapidjson::Document doc;
  if (auto why = parse_message(body, doc)) {
    out.refused.push_back("result message: " + *why);
    return out;
  }
  if (!doc.IsArray()) {
    send_result r;
    if (auto why = read_result(doc, r))
      out.refused.push_back("result message: " + *why);
    else
      out.results.push_back(std::move(r));
    return out;
  }
  auto n = doc.Size();
  if (n == 0 || n > max_results_per_message) {
    out.refused.push_back("result message: an array must hold 1 to "
                          + std::to_string(max_results_per_message)
                          + " results");
    return out;
  }
  // One bad entry does not cost the others their results.
  for (rapidjson::SizeType i = 0; i < n; ++i) {
    send_result r;
    if (auto why = read_result(doc[i], r))
      out.refused.push_back("result message: entry " + std::to_string(i + 1)
                            + ": " + *why);
    else
      out.results.push_back(std::move(r));
  }
  return out;
}

outgoing_message result_message(const std::string& queue, const send_result& r) {
  outgoing_message m;
  m.routing_key = results_queue(queue);
  m.body = result_message_body(r);
  m.message_id = std::to_string(r.delivery_id);
  m.correlation_id = r.dispatch_id;
  m.type = r.job;
  if (!r.traceparent.empty())
    m.headers[traceparent_header] = r.traceparent;
  return m;
}

namespace {

void write_result(json_writer_t& w, const send_result& r) {
  w.StartObject();
  w.Key("outboxDeliveryId");
  write_string(w, std::to_string(r.delivery_id));
  w.Key("outboxDispatchId");
  write_string(w, r.dispatch_id);
  w.Key("job");
  write_string(w, r.job);
  w.Key("outcome");
  w.String(to_string(r.result));
  if (!r.reason.empty()) {
    w.Key("reason");
    write_string(w, r.reason);
  }
  if (!r.traceparent.empty()) {
    w.Key("traceparent");
    write_string(w, r.traceparent);
  }
  w.EndObject();
}

} // namespace

std::string result_message_body(const send_result& r) {
  rapidjson::StringBuffer sb;
  json_writer_t w(sb);
  write_result(w, r);
  return sb.GetString();
}

std::vector<outgoing_message>
result_batch_messages(const std::string& queue,
                      const std::vector<send_result>& rs) {
  if (rs.size() == 1)
    return {result_message(queue, rs.front())};
  std::vector<outgoing_message> out;
  for (size_t first = 0; first < rs.size(); first += max_results_per_message) {
    auto last = std::min(rs.size(), first + max_results_per_message);
    rapidjson::StringBuffer sb;
    json_writer_t w(sb);
    w.StartArray();
    for (size_t i = first; i < last; ++i)
      write_result(w, rs[i]);
    w.EndArray();
    outgoing_message m;
    m.routing_key = results_queue(queue);
    m.body = sb.GetString();
    // Unique within a publish (a returned message is matched by it).
    m.message_id = std::to_string(rs[first].delivery_id);
    m.type = "results";
    out.push_back(std::move(m));
  }
  return out;
}

} // namespace outbox
