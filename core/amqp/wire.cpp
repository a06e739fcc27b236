#include "core/amqp/wire.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/base/errors.hpp"
#include "core/domain/event_headers.hpp"
#include "core/domain/trace_context.hpp"
#include "core/json/json_parse.hpp"

namespace outbox {

std::optional<int64_t> parse_decimal_id(const std::string& s) {
  if (s.empty() || s.size() > 18)
    return std::nullopt;
  int64_t id = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return std::nullopt;
    id = id * 10 + (c - '0');
  }
  return id > 0 ? std::optional<int64_t>{id} : std::nullopt;
}

bool is_uuid(const std::string& s) {
  if (s.size() != 36)
    return false;
  for (size_t i = 0; i < s.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !std::isxdigit(static_cast<unsigned char>(s[i])))
      return false;
  }
  return true;
}

namespace {

// Delivery ids travel as decimal strings (JSON numbers lose precision in
// many languages); plain integers are accepted too.
std::optional<int64_t> read_id(const rapidjson::Value& v) {
  if (v.IsInt64())
    return v.GetInt64() > 0 ? std::optional<int64_t>{v.GetInt64()} : std::nullopt;
  if (!v.IsString())
    return std::nullopt;
  return parse_decimal_id({v.GetString(), v.GetStringLength()});
}


using json_writer_t = rapidjson::Writer<rapidjson::StringBuffer>;

constexpr size_t max_reason_bytes = 200;

void write_string(json_writer_t& w, const std::string& s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

// The producer API checked JSON payloads before they were written or sent.
void write_payload(json_writer_t& w, const std::string& content_type,
                   const std::string& payload) {
  w.Key("payload");
  if (content_type == "application/json")
    w.RawValue(payload.data(), payload.size(), rapidjson::kObjectType);
  else
    write_string(w, payload);
}

} // namespace

std::string results_queue(const std::string& queue) {
  return queue + ".results";
}

std::string job_message_body(const job_to_send& job) {
  rapidjson::StringBuffer sb;
  json_writer_t w(sb);
  w.StartObject();
  w.Key("job");
  write_string(w, job.job);
  w.Key("eventType");
  write_string(w, job.event_type);
  w.Key("outboxEventId");
  write_string(w, std::to_string(job.event_id));
  w.Key("outboxDeliveryId");
  write_string(w, std::to_string(job.delivery_id));
  w.Key("outboxDispatchId");
  write_string(w, job.dispatch_id);
  w.Key("outboxLastAttempt");
  w.Bool(job.last_attempt);
  write_payload(w, job.content_type, job.payload);
  w.EndObject();
  return sb.GetString();
}

std::string expiration_property(int64_t ms) {
  if (ms <= 0)
    return {};
  return std::to_string(std::min(ms, max_expiration_ms));
}

outgoing_message job_message(const job_to_send& job) {
  outgoing_message m;
  m.routing_key = job.queue;
  m.body = job_message_body(job);
  m.message_id = std::to_string(job.delivery_id);
  m.correlation_id = job.dispatch_id;
  m.type = job.job;
  m.expiration = expiration_property(job.expiration_ms);
  m.headers = wire_headers(job.headers);
  return m;
}

outgoing_message direct_job_message(const std::string& job,
                                    const std::string& queue, const event& ev,
                                    std::string message_id,
                                    int64_t expiration_ms) {
  rapidjson::StringBuffer sb;
  json_writer_t w(sb);
  w.StartObject();
  w.Key("job");
  write_string(w, job);
  w.Key("eventType");
  write_string(w, ev.event_type);
  w.Key("outboxDirect");
  w.Bool(true);
  w.Key("outboxLastAttempt");
  w.Bool(true);
  write_payload(w, ev.content_type, ev.payload);
  w.EndObject();
  outgoing_message m;
  m.routing_key = queue;
  m.body = sb.GetString();
  m.message_id = std::move(message_id);
  m.type = job;
  m.headers = wire_headers(ev.headers);
  m.expiration = expiration_property(expiration_ms);
  return m;
}

namespace {

// One rule for the job wherever a message names it: a non-empty string
// without NUL (the database's text cannot hold one, and no route names one).
std::optional<std::string> read_job(const rapidjson::Value& obj,
                                    std::string& out) {
  auto it = obj.FindMember("job");
  if (it == obj.MemberEnd())
    return "job is missing";
  if (!it->value.IsString())
    return "job must be a string";
  if (it->value.GetStringLength() == 0)
    return "job must not be empty";
  if (std::memchr(it->value.GetString(), 0, it->value.GetStringLength()))
    return "job must not contain a NUL character";
  out.assign(it->value.GetString(), it->value.GetStringLength());
  return std::nullopt;
}

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

// Invalid UTF-8 is refused here (the database would refuse the whole batch
// of results it came in, again on every try), and so is nesting that could
// exhaust the reader's stack.
std::optional<std::string> parse_message(const std::string& body,
                                         rapidjson::Document& doc) {
  return parse_json(body, message_json_limits, doc);
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

namespace {

caf::error bad_job(const std::string& why) {
  return make_error(errc::deserialize_failed, "job message: " + why);
}

// The three fields a result needs; "" when one is missing or malformed.
std::optional<send_result> read_attribution(const rapidjson::Document& doc) {
  if (!doc.IsObject())
    return std::nullopt;
  auto id = doc.FindMember("outboxDeliveryId");
  auto dispatch = doc.FindMember("outboxDispatchId");
  send_result r;
  if (id == doc.MemberEnd() || dispatch == doc.MemberEnd()
      || !dispatch->value.IsString() || read_job(doc, r.job))
    return std::nullopt;
  auto parsed = read_id(id->value);
  std::string dispatch_id{dispatch->value.GetString(),
                          dispatch->value.GetStringLength()};
  if (!parsed || !is_uuid(dispatch_id))
    return std::nullopt;
  r.delivery_id = *parsed;
  r.dispatch_id = std::move(dispatch_id);
  return r;
}

caf::error read_event_type(const rapidjson::Document& doc,
                           job_message_fields& out) {
  auto type = doc.FindMember("eventType");
  if (type == doc.MemberEnd() || !type->value.IsString())
    return bad_job("eventType must be a string");
  out.event_type.assign(type->value.GetString(), type->value.GetStringLength());
  return caf::none;
}

caf::error read_payload(const rapidjson::Document& doc, job_message_fields& out) {
  auto payload = doc.FindMember("payload");
  if (payload == doc.MemberEnd())
    return bad_job("payload is missing");
  rapidjson::StringBuffer sb;
  json_writer_t w(sb);
  payload->value.Accept(w);
  out.payload_json = sb.GetString();
  return caf::none;
}

// A direct message has no ids: nobody waits for its result.
caf::expected<job_message_fields> parse_direct_job(const rapidjson::Document& doc) {
  job_message_fields out;
  out.direct = true;
  out.last_attempt = true;
  if (auto why = read_job(doc, out.job))
    return bad_job(*why);
  if (auto err = read_event_type(doc, out))
    return err;
  if (auto err = read_payload(doc, out))
    return err;
  return out;
}

} // namespace

caf::expected<job_message_fields> parse_job_message(const std::string& body) {
  rapidjson::Document doc;
  if (auto why = parse_message(body, doc))
    return bad_job(*why);
  if (!doc.IsObject())
    return bad_job("not a JSON object");
  if (has_duplicate_keys(doc))
    return bad_job("a key is given twice");
  if (auto direct = doc.FindMember("outboxDirect"); direct != doc.MemberEnd()) {
    if (!direct->value.IsBool() || !direct->value.GetBool())
      return bad_job("outboxDirect must be true when present");
    return parse_direct_job(doc);
  }
  auto ids = read_attribution(doc);
  if (!ids)
    return bad_job("outboxDeliveryId, outboxDispatchId (a UUID) and job are "
                   "required");
  job_message_fields out;
  out.delivery_id = ids->delivery_id;
  out.dispatch_id = ids->dispatch_id;
  out.job = ids->job;
  auto event_id = doc.FindMember("outboxEventId");
  if (event_id == doc.MemberEnd() || !read_id(event_id->value))
    return bad_job("outboxEventId must be a positive integer or a string of "
                   "digits");
  out.event_id = *read_id(event_id->value);
  if (auto err = read_event_type(doc, out))
    return err;
  auto last = doc.FindMember("outboxLastAttempt");
  if (last == doc.MemberEnd() || !last->value.IsBool())
    return bad_job("outboxLastAttempt must be true or false");
  out.last_attempt = last->value.GetBool();
  if (auto err = read_payload(doc, out))
    return err;
  return out;
}

std::optional<send_result> attribute_job_message(const std::string& body) {
  rapidjson::Document doc;
  if (parse_message(body, doc) || (doc.IsObject() && has_duplicate_keys(doc)))
    return std::nullopt;
  return read_attribution(doc);
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
